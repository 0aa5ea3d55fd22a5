import type { YamlPath } from '../yaml/problem.js';
import type { EnvEntry } from '../model/step.js';
import { ENV_NAME, isRecord, readString, show, type Ctx } from './context.js';

/**
 * `env` in every form the spec allows: a list of `KEY: value` mappings or `KEY=value` strings,
 * or a mapping. Order is kept, because later values may refer to earlier ones.
 */
export const readEnvEntries = (ctx: Ctx, v: unknown, path: YamlPath): EnvEntry[] => {
  if (v === undefined || v === null) return [];
  const out: EnvEntry[] = [];
  const add = (key: string, value: unknown, at: YamlPath): void => {
    if (!ENV_NAME.test(key)) {
      ctx.report(
        at,
        `invalid variable name ${show(key)}: use letters, digits and "_", not starting with a digit`,
      );
      return;
    }
    const s = value === null ? '' : readString(ctx, value, at);
    if (s !== undefined) out.push({ key, value: s });
  };
  if (isRecord(v)) {
    for (const [k, val] of Object.entries(v)) add(k, val, [...path, k]);
    return out;
  }
  if (!Array.isArray(v)) {
    ctx.report(path, `must be a list of KEY: value entries or a mapping, got ${show(v)}`);
    return out;
  }
  v.forEach((item, i) => {
    const at = [...path, i];
    if (isRecord(item)) {
      for (const [k, val] of Object.entries(item)) add(k, val, [...at, k]);
    } else if (typeof item === 'string' && item.includes('=')) {
      const eq = item.indexOf('=');
      add(item.slice(0, eq).trim(), item.slice(eq + 1), at);
    } else {
      ctx.report(at, `must be KEY: value or "KEY=value", got ${show(item)}`);
    }
  });
  return out;
};

/** `KEY=value` strings, as the API shows env. */
export const envToStrings = (env: readonly EnvEntry[]): string[] =>
  env.map((e) => `${e.key}=${e.value}`);
