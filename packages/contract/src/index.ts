export * from './status/statuses.js';
export * from './wire/common.schema.js';
export * from './wire/run.schema.js';
export * from './wire/run-request.schema.js';
export * from './wire/dag.schema.js';
export * from './wire/queue.schema.js';
export * from './wire/health.schema.js';
export type * from './wire/session.js';
