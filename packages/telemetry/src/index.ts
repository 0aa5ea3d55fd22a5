export { RunTracer, type RunTracerOptions } from './run-tracer.js';
export { Attr as SpanAttr } from './span-attributes.js';
export { parseTraceparent, formatTraceparent, type TraceParent } from './traceparent.js';
export { toTracesUrl, TRACES_PATH } from './otlp-endpoint.js';
export type { ExporterFactory } from './export-pipeline.js';
