import type { YamlPath } from '../yaml/problem.js';
import type { ParallelSpec } from '../model/step.js';
import { checkKeys, isRecord, readInt, show, withoutProtoKey, type Ctx } from './context.js';

/** Most items one parallel step may fan out to. */
export const MAX_PARALLEL_ITEMS = 1000;

const VARIABLE_REF = /^\$\{?[A-Za-z_][A-Za-z0-9_.]*\}?$/;

/** A map item becomes the JSON of the map with sorted keys. */
const itemText = (ctx: Ctx, item: unknown, path: YamlPath): string | undefined => {
  if (typeof item === 'string') return item;
  if (typeof item === 'number' || typeof item === 'boolean') return String(item);
  if (isRecord(item)) {
    const m = withoutProtoKey(ctx, item, path);
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(m).sort()) {
      const val = m[k];
      if (
        typeof val === 'string' ||
        typeof val === 'number' ||
        typeof val === 'boolean' ||
        val === null
      )
        sorted[k] = val;
      else
        ctx.report(
          [...path, k],
          `parallel item values must be text, numbers or booleans, got ${show(val)}`,
        );
    }
    return JSON.stringify(sorted);
  }
  ctx.report(path, `parallel items must be text, numbers or mappings, got ${show(item)}`);
  return undefined;
};

const readItems = (
  ctx: Ctx,
  v: unknown,
  path: YamlPath,
): Pick<ParallelSpec, 'items' | 'variable'> => {
  if (typeof v === 'string') {
    if (!VARIABLE_REF.test(v.trim())) {
      ctx.report(
        path,
        `must be a list of items or a variable reference such as \${ITEMS}, got ${show(v)}`,
      );
      return { items: [] };
    }
    return { items: [], variable: v.trim() };
  }
  if (!Array.isArray(v)) {
    ctx.report(
      path,
      `must be a list of items or a variable reference such as \${ITEMS}, got ${show(v)}`,
    );
    return { items: [] };
  }
  if (v.length === 0) ctx.report(path, 'parallel has no items: give at least one');
  if (v.length > MAX_PARALLEL_ITEMS)
    ctx.report(path, `parallel has ${v.length} items: at most ${MAX_PARALLEL_ITEMS} are allowed`);
  const items: string[] = [];
  v.forEach((item, i) => {
    const s = itemText(ctx, item, [...path, i]);
    if (s !== undefined) items.push(s);
  });
  return { items };
};

/**
 * `parallel`: a list of items, a variable reference, or `{items, maxConcurrent}`. The step-level
 * `maxConcurrent` applies when the object form does not set one.
 */
export const readParallel = (
  ctx: Ctx,
  v: unknown,
  path: YamlPath,
  stepMaxConcurrent: number | undefined,
): ParallelSpec | undefined => {
  if (v === undefined || v === null) return undefined;
  if (isRecord(v)) {
    checkKeys(ctx, v, path, ['items', 'maxConcurrent'], 'parallel');
    if (v.items === undefined) {
      ctx.report(path, 'parallel needs items: a list or a variable reference');
      return undefined;
    }
    const maxConcurrent = readInt(ctx, v.maxConcurrent, [...path, 'maxConcurrent'], { min: 1 });
    return {
      ...readItems(ctx, v.items, [...path, 'items']),
      maxConcurrent: maxConcurrent ?? stepMaxConcurrent ?? 0,
    };
  }
  return { ...readItems(ctx, v, path), maxConcurrent: stepMaxConcurrent ?? 0 };
};
