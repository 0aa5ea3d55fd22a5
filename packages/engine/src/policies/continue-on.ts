import { NodeStatus } from '@trellis/core';
import type { ContinueOn } from '@trellis/spec';
import { matchesOutputPattern } from '../vars/condition.js';

/**
 * Whether dependents may run after this node ended (as the peer does): a failed node when
 * `continueOn.failure`, its exit code is listed, or an `output` pattern matches its stdout; a
 * skipped node only with `continueOn.skipped`; a cancelled node never.
 */
export const shouldContinue = (
  c: ContinueOn,
  status: NodeStatus,
  exitCode: number | undefined,
  stdout: string | undefined,
): boolean => {
  if (status === NodeStatus.Skipped) return c.skipped;
  if (status !== NodeStatus.Failed) return false;
  if (c.failure) return true;
  if (exitCode !== undefined && c.exitCode.includes(exitCode)) return true;
  if (stdout !== undefined && c.output.some((p) => matchesOutputPattern(stdout, p))) return true;
  return false;
};
