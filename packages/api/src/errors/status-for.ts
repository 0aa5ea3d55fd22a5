import type { ErrorCode } from '@trellis/core';

/**
 * HTTP status of each error code (spec: Errors). A route may override it: the same code maps to
 * different statuses on different endpoints (`already_running` is 409 on start, 400 on retry).
 */
export const defaultStatus: Readonly<Record<ErrorCode, number>> = {
  bad_request: 400,
  not_running: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  already_exists: 409,
  already_running: 409,
  internal_error: 500,
  bad_gateway: 502,
  remote_node_error: 502, // 502 is our choice; the spec does not fix it (docs/decisions.md)
  service_unavailable: 503,
};

/** Per-route overrides of {@link defaultStatus}. */
export type StatusOverrides = Readonly<Partial<Record<ErrorCode, number>>>;
