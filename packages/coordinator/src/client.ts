/*
 * The worker's side of the coordinator: the gRPC client, its errors, the address ring, label
 * matching and the wire messages (the `@trellis/coordinator/client` entry). A worker process
 * imports this, not the package's index, which also loads the coordinator server with the store
 * and the API's schemas (docs/decisions.md, "A lean idle fleet").
 */
export {
  ANY_QUEUE,
  canonicalSelector,
  matchesSelector,
  parseLabels,
  selectorOfQueue,
  type Labels,
} from './registry/selector.js';
export {
  AddressRing,
  parseAddresses,
  retryWaitMs,
  SOFT_FAILURES_TO_MOVE,
} from './client/address-ring.js';
export { CoordinatorClient, type CoordinatorClientOptions } from './client/coordinator-client.js';
export { isRefused, isUnavailable, isWorkerRefused } from './client/call-failures.js';
export type { LogStream } from './client/log-stream.js';
export { Feature } from './wire/protocol.js';
export type { TlsFiles } from './server/credentials.js';
export type * from './wire/messages.js';
