import { formatPath, type Problem, type YamlPath } from '../yaml/problem.js';
import type { SourceMap } from '../yaml/source-map.js';
import { compilePattern } from './pattern.js';

/** Collects the problems of one document, positioned through its source map. */
export class Ctx {
  readonly problems: Problem[] = [];
  constructor(private readonly sourceMap?: SourceMap) {}

  report(path: YamlPath, message: string): void {
    const pos = this.sourceMap?.positionOf(path);
    this.problems.push({
      path: formatPath(path),
      message,
      ...(pos ? { line: pos.line } : {}),
    });
  }
}

/** Short, quoted rendering of a user value for messages. */
export const show = (v: unknown): string => {
  if (v === null || v === undefined) return 'nothing';
  if (typeof v === 'string') return JSON.stringify(v.length > 60 ? `${v.slice(0, 57)}...` : v);
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return typeof v;
};

export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Edit distance, for "did you mean" hints on unknown keys. */
const distance = (a: string, b: string): number => {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0] ?? 0;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j] ?? 0;
      prev[j] = Math.min(up + 1, (prev[j - 1] ?? 0) + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length] ?? 0;
};

/**
 * The allowed key `key` was most likely meant to be: the closest by edit distance when that is
 * small, else the only allowed key that starts with it or that it starts with (`retry` ->
 * `retryPolicy`, `keyFile` -> `key`). Undefined when nothing is a convincing match.
 */
export const suggest = (key: string, allowed: readonly string[]): string | undefined => {
  const lower = key.toLowerCase();
  let best: string | undefined;
  let bestD = Infinity;
  for (const k of allowed) {
    const d = distance(lower, k.toLowerCase());
    if (d < bestD) {
      bestD = d;
      best = k;
    }
  }
  if (best !== undefined && bestD < key.length && bestD <= Math.max(1, Math.floor(key.length / 3)))
    return best;
  if (lower.length < 3) return undefined;
  const prefixed = allowed.filter((k) => {
    const l = k.toLowerCase();
    return l.length >= 3 && (l.startsWith(lower) || lower.startsWith(l));
  });
  return prefixed.length === 1 ? prefixed[0] : undefined;
};

/** Reports every key of `obj` not in `allowed`, naming the closest allowed key. */
export const checkKeys = (
  ctx: Ctx,
  obj: Record<string, unknown>,
  path: YamlPath,
  allowed: readonly string[],
  what: string,
): void => {
  for (const key of Object.keys(obj)) {
    if (allowed.includes(key)) continue;
    const hint = suggest(key, allowed);
    const fix =
      allowed.length === 0
        ? 'it takes no fields, remove it'
        : hint
          ? `did you mean ${JSON.stringify(hint)}?`
          : `allowed fields are ${allowed.join(', ')}`;
    ctx.report([...path, key], `unknown field ${JSON.stringify(key)} in ${what}: ${fix}`);
  }
};

/** A mapping at `path`, or a problem (and undefined) when the value is something else. */
export const readMap = (
  ctx: Ctx,
  v: unknown,
  path: YamlPath,
  what: string,
): Record<string, unknown> | undefined => {
  if (v === undefined || v === null) return undefined;
  if (isRecord(v)) return v;
  ctx.report(path, `${what} must be a mapping of fields, got ${show(v)}`);
  return undefined;
};

/** Scalars (string, number, boolean) as text; anything else is a problem. */
export const readString = (ctx: Ctx, v: unknown, path: YamlPath): string | undefined => {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  ctx.report(path, `must be text, got ${show(v)}`);
  return undefined;
};

export const readBool = (ctx: Ctx, v: unknown, path: YamlPath): boolean | undefined => {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'boolean') return v;
  if (v === 'true' || v === 'false') return v === 'true';
  ctx.report(path, `must be true or false, got ${show(v)}`);
  return undefined;
};

export interface IntRule {
  min?: number;
  max?: number;
  /** Extra value allowed below `min`, such as -1 meaning "unlimited". */
  special?: number;
  hint?: string;
}

/** An integer (numeric text accepted), checked against `rule`. */
export const readInt = (
  ctx: Ctx,
  v: unknown,
  path: YamlPath,
  rule: IntRule = {},
): number | undefined => {
  if (v === undefined || v === null) return undefined;
  const n =
    typeof v === 'number' ? v : typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : NaN;
  const inRange =
    Number.isInteger(n) &&
    (n === rule.special ||
      ((rule.min === undefined || n >= rule.min) && (rule.max === undefined || n <= rule.max)));
  if (inRange) return n;
  const range =
    rule.hint ??
    (rule.min !== undefined && rule.max !== undefined
      ? `an integer from ${rule.min} to ${rule.max}`
      : rule.min !== undefined
        ? `an integer of at least ${rule.min}`
        : 'an integer');
  ctx.report(path, `must be ${range}, got ${show(v)}`);
  return undefined;
};

/** A string or a list of strings (scalars converted) as a list. */
export const readStringList = (ctx: Ctx, v: unknown, path: YamlPath): string[] | undefined => {
  if (v === undefined || v === null) return undefined;
  if (isRecord(v)) {
    ctx.report(path, `must be text or a list of text, got ${show(v)}`);
    return undefined;
  }
  if (!Array.isArray(v)) {
    const s = readString(ctx, v, path);
    return s === undefined ? undefined : [s];
  }
  const out: string[] = [];
  v.forEach((item, i) => {
    const s = readString(ctx, item, [...path, i]);
    if (s !== undefined) out.push(s);
  });
  return out;
};

/** A mapping whose values are scalars, as a string record. */
export const readStringMap = (
  ctx: Ctx,
  v: unknown,
  path: YamlPath,
  what: string,
): Record<string, string> | undefined => {
  const m = readMap(ctx, v, path, what);
  if (!m) return undefined;
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(m)) {
    const s = readString(ctx, val, [...path, k]);
    if (s !== undefined) out[k] = s;
  }
  return out;
};

/** One of `choices`, or a problem naming them. */
export const readEnum = <T extends string>(
  ctx: Ctx,
  v: unknown,
  path: YamlPath,
  choices: readonly T[],
): T | undefined => {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string' && (choices as readonly string[]).includes(v)) return v as T;
  ctx.report(
    path,
    `must be one of ${choices.map((c) => JSON.stringify(c)).join(', ')}, got ${show(v)}`,
  );
  return undefined;
};

/** A regular expression source that must compile. */
export const checkRegex = (ctx: Ctx, source: string, path: YamlPath): void => {
  try {
    compilePattern(source);
  } catch (e) {
    // V8 says "Invalid regular expression: /<source>/<flags>: <reason>"; keep only the reason.
    const reason = (e as Error).message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, '');
    ctx.report(path, `invalid regular expression ${JSON.stringify(source)}: ${reason}`);
  }
};

/** Checks a `re:`-prefixed pattern, if it is one. */
export const checkMaybeRegex = (ctx: Ctx, pattern: string, path: YamlPath): void => {
  if (pattern.startsWith('re:')) checkRegex(ctx, pattern.slice(3), path);
};

/** Integer list from an int, numeric text, or a list of them (exit codes). */
export const readIntList = (ctx: Ctx, v: unknown, path: YamlPath): number[] | undefined => {
  if (v === undefined || v === null) return undefined;
  const items = Array.isArray(v) ? v : [v];
  const out: number[] = [];
  items.forEach((item, i) => {
    const n = readInt(ctx, item, Array.isArray(v) ? [...path, i] : path, {
      min: 0,
      max: 255,
      hint: 'an exit code from 0 to 255',
    });
    if (n !== undefined) out.push(n);
  });
  return out;
};

/** Names usable as environment variables (params, env keys, output variables). */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
