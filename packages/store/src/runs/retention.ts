import { RunStatus } from '@trellis/core';
import type { RunSummary } from './run-summary.js';

export const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Statuses retention may delete: the final ones and "not started" (a run that never ran). A
 * running or queued run is never deleted.
 */
const DELETABLE: ReadonlySet<RunStatus> = new Set<RunStatus>([
  RunStatus.NotStarted,
  RunStatus.Failed,
  RunStatus.Cancelled,
  RunStatus.Succeeded,
  RunStatus.PartiallySucceeded,
]);

/** True for a run that is neither running nor queued. */
export const isRetentionDeletable = (s: Pick<RunSummary, 'status'>): boolean =>
  DELETABLE.has(s.status);

/**
 * True when a run ended (or, never started, was created) before `cutoffMs` (Unix ms) and may be
 * deleted. A run whose timestamps cannot be read is kept.
 */
export const isExpired = (
  s: Pick<RunSummary, 'status' | 'finishedAt' | 'createdAt'>,
  cutoffMs: number,
): boolean => {
  if (!isRetentionDeletable(s)) return false;
  const at = Date.parse(s.finishedAt !== '' ? s.finishedAt : s.createdAt);
  return at < cutoffMs;
};
