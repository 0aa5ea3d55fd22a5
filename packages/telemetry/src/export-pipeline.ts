import type { Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import type { OtelSpec } from '@trellis/spec';
import { toTracesUrl } from './otlp-endpoint.js';
import { ReportingExporter } from './reporting-exporter.js';

/** Builds the exporter of one `otel` setting (tests pass an in-memory one). */
export type ExporterFactory = (otel: OtelSpec, url: string) => SpanExporter;

/**
 * The OTLP exporter: HTTP with protobuf bodies (`application/x-protobuf`), the OTLP default
 * encoding that every OTLP/HTTP receiver accepts (JSON is optional for receivers). `insecure`
 * with an https endpoint also accepts a certificate that does not verify.
 */
export const otlpProtoExporter: ExporterFactory = (otel, url) =>
  new OTLPTraceExporter({
    url,
    headers: { ...otel.headers },
    timeoutMillis: Math.max(1, Math.round(otel.timeoutSec * 1000)),
    ...(otel.insecure && url.startsWith('https:')
      ? { httpAgentOptions: { rejectUnauthorized: false } }
      : {}),
  });

/** One tracer provider per distinct `otel` setting: its exporter, batch processor and tracer. */
export interface ExportPipeline {
  readonly url: string;
  readonly tracer: Tracer;
  readonly timeoutMs: number;
  readonly provider: BasicTracerProvider;
}

/** Options shared by every pipeline. */
export interface PipelineOptions {
  readonly serviceVersion: string;
  readonly warn: (message: string) => void;
  readonly exporterFor: ExporterFactory;
  /** Delay between batch exports, ms. */
  readonly batchDelayMs: number;
}

/**
 * Creates the pipeline of an `otel` setting, or a problem sentence when its endpoint is unusable.
 * Spans wait in a bounded queue (2048) and are sent in batches; when the queue is full, new
 * spans are dropped rather than held: exporting never slows a run down.
 */
export const createPipeline = (
  otel: OtelSpec,
  opts: PipelineOptions,
): ExportPipeline | { problem: string } => {
  const target = toTracesUrl(otel.endpoint ?? '', otel.insecure);
  if ('problem' in target) return target;
  const timeoutMs = Math.max(1, Math.round(otel.timeoutSec * 1000));
  const exporter = new ReportingExporter(opts.exporterFor(otel, target.url), target.url, opts.warn);
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      'service.name': 'trellis',
      'service.version': opts.serviceVersion,
      ...otel.resource,
    }),
    spanProcessors: [
      new BatchSpanProcessor(exporter, {
        scheduledDelayMillis: opts.batchDelayMs,
        exportTimeoutMillis: timeoutMs,
        maxQueueSize: 2048,
      }),
    ],
  });
  return {
    url: target.url,
    timeoutMs,
    provider,
    tracer: provider.getTracer('trellis', opts.serviceVersion),
  };
};
