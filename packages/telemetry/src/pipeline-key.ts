import type { OtelSpec } from '@trellis/spec';

/** Identity of an `otel` setting: runs with equal settings share one export pipeline. */
export const pipelineKey = (otel: OtelSpec): string =>
  JSON.stringify([
    otel.endpoint,
    Object.entries(otel.headers).sort(),
    otel.insecure,
    otel.timeoutSec,
    Object.entries(otel.resource).sort(),
  ]);
