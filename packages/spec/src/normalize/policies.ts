import type { YamlPath } from '../yaml/problem.js';
import type { ContinueOn, IntOrExpr, RepeatPolicy, RetryPolicy } from '../model/step.js';
import {
  checkKeys,
  checkMaybeRegex,
  readBool,
  readInt,
  readIntList,
  readMap,
  readString,
  readStringList,
  show,
  type Ctx,
} from './context.js';

/** `continueOn` when none is written: a failed or skipped step stops its dependents. */
export const NO_CONTINUE: ContinueOn = {
  failure: false,
  skipped: false,
  exitCode: [],
  output: [],
  markSuccess: false,
};

/** `continueOn`: `failure`, `skipped`, `exitCode`, `output` (`re:` = regex), `markSuccess`. */
export const readContinueOn = (ctx: Ctx, v: unknown, path: YamlPath): ContinueOn => {
  const m = readMap(ctx, v, path, 'continueOn');
  if (!m) return NO_CONTINUE;
  checkKeys(
    ctx,
    m,
    path,
    ['failure', 'skipped', 'exitCode', 'output', 'markSuccess'],
    'continueOn',
  );
  const output = readStringList(ctx, m.output, [...path, 'output']) ?? [];
  output.forEach((p, i) =>
    checkMaybeRegex(ctx, p, Array.isArray(m.output) ? [...path, 'output', i] : [...path, 'output']),
  );
  return {
    failure: readBool(ctx, m.failure, [...path, 'failure']) ?? false,
    skipped: readBool(ctx, m.skipped, [...path, 'skipped']) ?? false,
    exitCode: readIntList(ctx, m.exitCode, [...path, 'exitCode']) ?? [],
    output,
    markSuccess: readBool(ctx, m.markSuccess, [...path, 'markSuccess']) ?? false,
  };
};

/** `backoff`: `true` is 2.0, `false` is none (1); a number must be greater than 1.0. */
export const readBackoff = (ctx: Ctx, v: unknown, path: YamlPath): number => {
  if (v === undefined || v === null || v === false) return 1;
  if (v === true) return 2;
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  if (Number.isFinite(n) && n > 1) return n;
  ctx.report(path, `must be true (multiplier 2.0) or a number greater than 1.0, got ${show(v)}`);
  return 1;
};

/** A non-negative integer, or text holding a variable reference expanded at run time. */
const readIntOrExpr = (ctx: Ctx, v: unknown, path: YamlPath): IntOrExpr | undefined => {
  if (typeof v === 'string' && v.includes('$')) return v;
  return readInt(ctx, v, path, {
    min: 0,
    hint: 'a non-negative integer or a ${VARIABLE} reference',
  });
};

/** `retryPolicy`: `limit`, `intervalSec`, `backoff`, `maxIntervalSec`, `exitCode`. */
export const readRetryPolicy = (ctx: Ctx, v: unknown, path: YamlPath): RetryPolicy | undefined => {
  const m = readMap(ctx, v, path, 'retryPolicy');
  if (!m) return undefined;
  checkKeys(
    ctx,
    m,
    path,
    ['limit', 'intervalSec', 'backoff', 'maxIntervalSec', 'exitCode'],
    'retryPolicy',
  );
  if (m.limit === undefined)
    ctx.report(path, 'retryPolicy needs limit: the number of retries after the first attempt');
  return {
    limit: readIntOrExpr(ctx, m.limit, [...path, 'limit']) ?? 0,
    intervalSec: readIntOrExpr(ctx, m.intervalSec, [...path, 'intervalSec']) ?? 0,
    backoff: readBackoff(ctx, m.backoff, [...path, 'backoff']),
    maxIntervalSec: readInt(ctx, m.maxIntervalSec, [...path, 'maxIntervalSec'], { min: 0 }) ?? 0,
    exitCode: readIntList(ctx, m.exitCode, [...path, 'exitCode']) ?? [],
  };
};

/**
 * `repeatPolicy`. Mode: `while`/`until` as written; `true` = while (repeat while the step
 * succeeds); absent = `until` with condition+expected, else `while` with condition or exitCode.
 */
export const readRepeatPolicy = (
  ctx: Ctx,
  v: unknown,
  path: YamlPath,
): RepeatPolicy | undefined => {
  const m = readMap(ctx, v, path, 'repeatPolicy');
  if (!m) return undefined;
  checkKeys(
    ctx,
    m,
    path,
    [
      'repeat',
      'intervalSec',
      'backoff',
      'maxIntervalSec',
      'limit',
      'condition',
      'expected',
      'exitCode',
    ],
    'repeatPolicy',
  );
  const condition = readString(ctx, m.condition, [...path, 'condition']);
  const expected = readString(ctx, m.expected, [...path, 'expected']);
  const exitCode = readIntList(ctx, m.exitCode, [...path, 'exitCode']) ?? [];
  if (expected !== undefined) {
    checkMaybeRegex(ctx, expected, [...path, 'expected']);
    if (condition === undefined)
      ctx.report([...path, 'expected'], 'expected needs a condition to compare against');
  }
  const repeat = m.repeat;
  let mode: 'while' | 'until' | undefined;
  if (repeat === 'while' || repeat === 'until') {
    mode = repeat;
    if (condition === undefined && exitCode.length === 0)
      ctx.report(path, `repeat: ${repeat} needs a condition or exitCode to decide when to stop`);
  } else if (repeat === true) mode = 'while';
  else if (repeat === false) return undefined;
  else if (repeat !== undefined) {
    ctx.report([...path, 'repeat'], `must be "while", "until", true or false, got ${show(repeat)}`);
    return undefined;
  } else if (condition !== undefined) mode = expected !== undefined ? 'until' : 'while';
  else if (exitCode.length > 0) mode = 'while';
  else {
    ctx.report(path, 'repeatPolicy needs repeat (while or until) with a condition or exitCode');
    return undefined;
  }
  return {
    mode,
    ...(condition !== undefined ? { condition } : {}),
    ...(expected !== undefined ? { expected } : {}),
    exitCode,
    limit: readInt(ctx, m.limit, [...path, 'limit'], { min: 0 }) ?? 0,
    intervalSec: readInt(ctx, m.intervalSec, [...path, 'intervalSec'], { min: 0 }) ?? 0,
    backoff: readBackoff(ctx, m.backoff, [...path, 'backoff']),
    maxIntervalSec: readInt(ctx, m.maxIntervalSec, [...path, 'maxIntervalSec'], { min: 0 }) ?? 0,
  };
};
