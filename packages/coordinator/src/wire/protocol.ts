/**
 * The coordinator protocol's version and the metadata every worker call carries (the handshake:
 * checked on every call, before its handler runs). The proto only grows by new fields, which
 * older peers ignore; the version changes when a change is not compatible.
 */

/** The protocol version this build speaks. */
export const PROTOCOL_VERSION = 1;

/** Versions a coordinator of this build accepts from workers. */
export const SUPPORTED_PROTOCOLS: readonly number[] = [1];

/**
 * What a coordinator takes beyond the first version of the protocol, named in every heartbeat
 * reply (`HeartbeatResponse.features`): a worker uses a feature only with a coordinator that
 * named it, so a new worker keeps working with an older coordinator (docs/decisions.md).
 */
export const Feature = {
  /** Log chunks carried in a status report (`StatusReport.logs`), applied before its record. */
  ReportLogs: 'report-logs',
} as const;
export type Feature = (typeof Feature)[keyof typeof Feature];

/** The features a coordinator of this build names. */
export const COORDINATOR_FEATURES: readonly Feature[] = [Feature.ReportLogs];

/** Metadata key of the worker's protocol version; absent means 1 (workers before the key). */
export const PROTOCOL_KEY = 'trellis-protocol';

/** Metadata key naming the worker (for the coordinator's log of a refusal). */
export const WORKER_ID_KEY = 'trellis-worker-id';
