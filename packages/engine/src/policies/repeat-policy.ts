import type { RepeatPolicy } from '@trellis/spec';
import { backoffDelayMs } from './backoff.js';

/** Whether the limit allows another execution after `doneCount` (a limit of 0 means none). */
export const repeatAllowed = (p: RepeatPolicy, doneCount: number): boolean =>
  p.limit === 0 || doneCount < p.limit;

/** Milliseconds to wait before execution number `doneCount + 1`. */
export const repeatDelayMs = (p: RepeatPolicy, doneCount: number): number =>
  backoffDelayMs(p.intervalSec, p.backoff, doneCount, p.maxIntervalSec);

/**
 * Whether the repeat condition holds for a policy without a `condition` (as the peer does):
 * the exit code is listed in `exitCode`, or, without a list, the execution succeeded. A signal
 * counts as exit code -1.
 */
export const repeatHoldsByExit = (
  p: RepeatPolicy,
  result: { readonly ok: boolean; readonly exitCode: number | null },
): boolean => (p.exitCode.length > 0 ? p.exitCode.includes(result.exitCode ?? -1) : result.ok);

/** `while` repeats as long as the condition holds, `until` until it holds. */
export const repeatsWhen = (p: RepeatPolicy, holds: boolean): boolean =>
  p.mode === 'while' ? holds : !holds;
