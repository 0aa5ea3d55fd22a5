import type { NodeRecord } from '@trellis/spec';
import {
  repeatAllowed,
  repeatDelayMs,
  repeatHoldsByExit,
  repeatsWhen,
} from '../../policies/repeat-policy.js';
import { matchExpected } from '../../vars/condition.js';
import type { AttemptResult } from './attempt-result.js';
import { conditionEnv, expandFull, withVars, type NodeScope } from './node-scope.js';
import type { RunContext } from '../run-context.js';

/** Repeat decision (as the peer does), evaluated with the step's own fresh output. */
const shouldRepeat = async (
  ctx: RunContext,
  n: NodeRecord,
  scope: NodeScope,
  result: AttemptResult,
): Promise<boolean> => {
  const p = n.step.repeatPolicy;
  if (!p || ctx.stop.aborted) return false;
  if (p.condition === undefined) return repeatsWhen(p, repeatHoldsByExit(p, result));
  const fresh = withVars(scope, n.outputs);
  let holds: boolean;
  if (p.expected !== undefined) {
    const got = (await expandFull(ctx, fresh, p.condition)).trim();
    holds = matchExpected(got, p.expected);
  } else {
    const r = await conditionEnv(ctx, fresh, n.step.shell).runCommand(p.condition);
    holds = r.exitCode === 0;
  }
  return repeatsWhen(p, holds);
};

/** What the repeat policy made of an execution. */
export type RepeatStep = 'repeat' | 'done' | 'stopped';

/**
 * After an execution (counted in `doneCount`): when the step repeats, logs it, moves the
 * node's child runs to `childrenRepeated` and waits the interval ('repeat', or 'stopped' when the
 * run is stopped meanwhile); 'done' otherwise.
 */
export const repeatAfter = async (
  ctx: RunContext,
  n: NodeRecord,
  scope: NodeScope,
  result: AttemptResult,
): Promise<RepeatStep> => {
  const repeat = n.step.repeatPolicy;
  if (!repeat || !repeatAllowed(repeat, n.doneCount)) return 'done';
  if (!(await shouldRepeat(ctx, n, scope, result))) return 'done';
  const wait = repeatDelayMs(repeat, n.doneCount);
  ctx.log(
    `step "${n.step.name}" repeats (${repeat.mode}) after ${wait} ms, execution ${n.doneCount + 1}`,
  );
  if (n.children.length > 0) {
    n.childrenRepeated = [...n.childrenRepeated, ...n.children];
    n.children = [];
  }
  ctx.saver.persist();
  try {
    await ctx.deps.clock.sleep(wait, ctx.stop.signal);
  } catch {
    return 'stopped';
  }
  return 'repeat';
};
