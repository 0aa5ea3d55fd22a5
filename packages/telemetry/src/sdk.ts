import type * as OtelApi from '@opentelemetry/api';
import type * as Pipeline from './export-pipeline.js';

/** The OpenTelemetry pieces a traced run needs, loaded on first use. */
export interface Sdk {
  readonly api: typeof OtelApi;
  readonly createPipeline: typeof Pipeline.createPipeline;
  readonly otlpProtoExporter: typeof Pipeline.otlpProtoExporter;
}

let loading: Promise<Sdk> | undefined;

/**
 * Loads the OpenTelemetry SDK and OTLP exporter once, when the first traced run starts: loading
 * them takes hundreds of milliseconds, which every CLI command would pay otherwise.
 */
export const loadSdk = (): Promise<Sdk> =>
  (loading ??= Promise.all([import('@opentelemetry/api'), import('./export-pipeline.js')]).then(
    ([api, p]) => ({
      api,
      createPipeline: p.createPipeline,
      otlpProtoExporter: p.otlpProtoExporter,
    }),
  ));
