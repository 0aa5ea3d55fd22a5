import type { YamlPath } from '../yaml/problem.js';
import type { Condition } from '../model/step.js';
import { checkKeys, checkMaybeRegex, isRecord, readString, show, type Ctx } from './context.js';

/**
 * `preconditions` (and the singular `precondition`): one entry or a list of entries, each a
 * command string, `{condition, expected?, error?}` or `{command}`.
 */
export const readConditions = (ctx: Ctx, v: unknown, path: YamlPath): Condition[] => {
  if (v === undefined || v === null) return [];
  const items = Array.isArray(v) ? v : [v];
  const out: Condition[] = [];
  items.forEach((item, i) => {
    const at = Array.isArray(v) ? [...path, i] : path;
    if (typeof item === 'string') {
      if (item.trim() === '')
        ctx.report(at, 'empty precondition: write a command, or {condition, expected}');
      else out.push({ condition: item });
      return;
    }
    if (!isRecord(item)) {
      ctx.report(
        at,
        `must be a command, or a mapping with condition and expected, got ${show(item)}`,
      );
      return;
    }
    checkKeys(ctx, item, at, ['condition', 'expected', 'error', 'command'], 'a precondition');
    if (item.condition !== undefined && item.command !== undefined) {
      ctx.report(at, 'set either condition or command, not both');
    }
    const condition = readString(ctx, item.condition ?? item.command, [
      ...at,
      item.condition !== undefined ? 'condition' : 'command',
    ]);
    const expected = readString(ctx, item.expected, [...at, 'expected']);
    const error = readString(ctx, item.error, [...at, 'error']);
    if (condition === undefined || condition.trim() === '') {
      ctx.report(at, 'precondition has no condition: set condition (with expected) or command');
      return;
    }
    if (expected !== undefined) checkMaybeRegex(ctx, expected, [...at, 'expected']);
    out.push({
      condition,
      ...(expected !== undefined ? { expected } : {}),
      ...(error !== undefined ? { error } : {}),
    });
  });
  return out;
};
