import { NodeStatus } from '@trellis/core';
import type { NodeRecord } from '@trellis/spec';
import {
  resolveRetryPolicy,
  retryDelayMs,
  shouldRetry,
  type ResolvedRetryPolicy,
} from '../../policies/retry-policy.js';
import { stepVerdict } from '../../policies/step-verdict.js';
import type { StepLogs } from '../../ports/recorder.js';
import { expandVarsSync } from '../../vars/expand.js';
import type { AttemptResult } from './attempt-result.js';
import type { NodeScope } from './node-scope.js';
import { attempt } from './parallel-attempt.js';
import { finishNode } from '../record-keeping.js';
import { repeatAfter } from './repeat-step.js';
import type { RunContext } from '../run-context.js';

/**
 * Attempts the node until it succeeds, its retries are used up (as the peer does), or the run
 * is stopped; the last attempt's result.
 */
const attemptWithRetries = async (
  ctx: RunContext,
  n: NodeRecord,
  scope: NodeScope,
  logs: StepLogs,
  retry: ResolvedRetryPolicy | undefined,
): Promise<AttemptResult> => {
  for (;;) {
    const result = await attempt(ctx, n, scope, logs);
    if (result.cancelled || ctx.stop.aborted) return result;
    if (result.ok || !retry || !shouldRetry(retry, n.retryCount, result.exitCode)) return result;
    const wait = retryDelayMs(retry, n.retryCount);
    ctx.log(
      `step "${n.step.name}" failed (${result.error}); retry ${n.retryCount + 1} of ${retry.limit} in ${wait} ms`,
    );
    try {
      await ctx.deps.clock.sleep(wait, ctx.stop.signal);
    } catch {
      return result;
    }
    n.retryCount++;
    n.retriedAt = ctx.now();
    ctx.saver.persist();
  }
};

/**
 * The last execution's result once the node's log files are closed: a log that could not be
 * written (a full disk) fails the step, naming the file and the error, even when its command
 * succeeded; `continueOn.failure` lets the run go on (docs/decisions.md, "Log write failures").
 */
const withLogOutcome = async (logs: StepLogs, result: AttemptResult): Promise<AttemptResult> => {
  try {
    await logs.close();
    return result;
  } catch (e) {
    const error = `the step's log is incomplete: ${(e as Error).message}`;
    // exitCode null: only continueOn.failure (not an exit code list) lets it pass
    return { ...result, ok: false, exitCode: null, error: join(result.error, error) };
  }
};

const join = (a: string, b: string): string => (a === '' ? b : `${a}; ${b}`);

/** Ends the node as its last execution's result and `continueOn` say. */
const finishByVerdict = (
  ctx: RunContext,
  n: NodeRecord,
  result: AttemptResult,
  isHandler: boolean,
): void => {
  const verdict = stepVerdict(n.step.continueOn, result);
  ctx.progress.continues.set(n.step.name, verdict.continues);
  if (!result.ok && isHandler) ctx.progress.handlerFailed = true;
  if (verdict.failedButContinued) ctx.progress.failedButContinued.add(n.step.name);
  finishNode(ctx, n, verdict.status, verdict.error);
};

/**
 * Executes a started node under its policies (retry, then repeat, then continueOn) and ends it
 * with its final status.
 */
export const executeWithPolicies = async (
  ctx: RunContext,
  n: NodeRecord,
  scope: NodeScope,
  logs: StepLogs,
  isHandler: boolean,
): Promise<void> => {
  const step = n.step;
  const retry = step.retryPolicy
    ? resolveRetryPolicy(step.retryPolicy, (t) => expandVarsSync(t, scope.fullScopes))
    : undefined;
  for (;;) {
    const result = await attemptWithRetries(ctx, n, scope, logs, retry);
    if (result.cancelled || ctx.stop.aborted) {
      finishNode(ctx, n, NodeStatus.Cancelled, result.error || ctx.stop.reason);
      return;
    }
    n.doneCount++;
    if (step.output && result.output !== undefined)
      n.outputs = { ...n.outputs, [step.output]: result.output };
    if (result.exitCode !== null) n.exitCode = result.exitCode;

    const repeat = await repeatAfter(ctx, n, scope, result);
    if (repeat === 'repeat') continue;
    if (repeat === 'stopped') finishNode(ctx, n, NodeStatus.Cancelled, ctx.stop.reason);
    else finishByVerdict(ctx, n, await withLogOutcome(logs, result), isHandler);
    return;
  }
};
