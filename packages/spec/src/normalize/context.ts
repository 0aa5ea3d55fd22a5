import { formatPath, type Problem, type YamlPath } from '../yaml/problem.js';
import type { SourceMap } from '../yaml/source-map.js';
import { compilePattern } from './pattern.js';

/** Collects the problems of one document, positioned through its source map. */
export class Ctx {
  readonly problems: Problem[] = [];
  constructor(private readonly sourceMap?: SourceMap) {}

  /** Records a problem at `path`, with the line where the document writes it. */
  report(path: YamlPath, message: string): void {
    const pos = this.sourceMap?.positionOf(path);
    this.problems.push({
      path: formatPath(path),
      message,
      ...(pos ? { line: pos.line } : {}),
    });
  }

  /**
   * Records a problem with no line: for a value that comes from outside the document (the DAG's
   * name taken from its file name), where the nearest line would point at unrelated text.
   */
  reportUnplaced(path: YamlPath, message: string): void {
    this.problems.push({ path: formatPath(path), message });
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

/** Keys longer than this get no "did you mean" hint: a key that long is not a typo. */
export const MAX_HINT_KEY_LENGTH = 64;
/** With more candidates than this, hints are skipped: a guess among so many convinces no one. */
export const MAX_HINT_CANDIDATES = 500;
/** Lookups one suggester answers; later keys get no hint (so many unknown names are no typos). */
export const MAX_HINTED_KEYS = 100;

/** Two rows of the distance table, reused: keys are short, so they rarely grow. */
let rowA = new Int32Array(128);
let rowB = new Int32Array(128);

/**
 * Edit distance between `a` and `b` when it is at most `max`, else `max + 1`. Only cells within
 * `max` of the diagonal are computed, and it stops as soon as a whole row exceeds `max` (the
 * distance can only grow from there); pairs whose lengths differ by more than `max` cost nothing.
 */
export const boundedDistance = (a: string, b: string, max: number): number => {
  const over = max + 1;
  if (max < 0 || Math.abs(a.length - b.length) > max) return over;
  if (rowA.length < b.length + 2) {
    rowA = new Int32Array(b.length + 2);
    rowB = new Int32Array(b.length + 2);
  }
  let prev = rowA;
  let cur = rowB;
  for (let j = 0; j <= b.length; j++) prev[j] = Math.min(j, over);
  prev[b.length + 1] = over;
  for (let i = 1; i <= a.length; i++) {
    // Cells outside the band [i - max, i + max] count as `over`; the two next to it are written
    // so that this row and the next read `over` there.
    const lo = Math.max(1, i - max);
    const hi = Math.min(b.length, i + max);
    let left = lo === 1 ? Math.min(i, over) : over;
    cur[lo - 1] = left;
    cur[hi + 1] = over;
    let rowMin = left;
    const ai = a.charCodeAt(i - 1);
    for (let j = lo; j <= hi; j++) {
      let d = (prev[j - 1] ?? over) + (ai === b.charCodeAt(j - 1) ? 0 : 1);
      const up = (prev[j] ?? over) + 1;
      if (up < d) d = up;
      if (left + 1 < d) d = left + 1;
      if (d > over) d = over;
      cur[j] = d;
      left = d;
      if (d < rowMin) rowMin = d;
    }
    if (rowMin > max) return over;
    const done = prev;
    prev = cur;
    cur = done;
  }
  return prev[b.length] ?? over;
};

/** Finds the allowed key a written key was most likely meant to be (see {@link makeSuggester}). */
export type Suggester = (key: string) => string | undefined;

/**
 * Prepares "did you mean" lookups over `allowed` once, for all the keys of one call site. A
 * lookup answers the closest allowed key by edit distance when that is small (at most a third of
 * the key's length), else the only allowed key that starts with the key or that the key starts
 * with (`retry` -> `retryPolicy`, `keyFile` -> `key`), else undefined. The cost is bounded: no
 * hint for keys longer than {@link MAX_HINT_KEY_LENGTH}, among more than
 * {@link MAX_HINT_CANDIDATES} candidates, or after {@link MAX_HINTED_KEYS} lookups.
 */
export const makeSuggester = (allowed: readonly string[]): Suggester => {
  if (allowed.length > MAX_HINT_CANDIDATES) return () => undefined;
  const candidates = allowed.map((k) => ({ key: k, lower: k.toLowerCase() }));
  let lookups = 0;
  return (key) => {
    if (key.length > MAX_HINT_KEY_LENGTH || ++lookups > MAX_HINTED_KEYS) return undefined;
    const lower = key.toLowerCase();
    // A hint must change fewer characters than the key has.
    const max = Math.min(Math.max(1, Math.floor(key.length / 3)), key.length - 1);
    let best: string | undefined;
    let bestD = max + 1;
    for (const c of candidates) {
      const d = boundedDistance(lower, c.lower, bestD - 1);
      if (d < bestD) {
        bestD = d;
        best = c.key;
      }
    }
    if (best !== undefined) return best;
    if (lower.length < 3) return undefined;
    let prefixed: string | undefined;
    for (const c of candidates) {
      if (c.lower.length < 3 || !(c.lower.startsWith(lower) || lower.startsWith(c.lower))) continue;
      if (prefixed !== undefined) return undefined;
      prefixed = c.key;
    }
    return prefixed;
  };
};

/** One "did you mean" lookup; use {@link makeSuggester} when checking many keys. */
export const suggest = (key: string, allowed: readonly string[]): string | undefined =>
  makeSuggester(allowed)(key);

/** Reports every key of `obj` not in `allowed`, naming the closest allowed key. */
export const checkKeys = (
  ctx: Ctx,
  obj: Record<string, unknown>,
  path: YamlPath,
  allowed: readonly string[],
  what: string,
): void => {
  let hintFor: Suggester | undefined;
  for (const key of Object.keys(obj)) {
    if (allowed.includes(key)) continue;
    hintFor ??= makeSuggester(allowed);
    const hint = hintFor(key);
    const fix =
      allowed.length === 0
        ? 'it takes no fields, remove it'
        : hint
          ? `did you mean ${JSON.stringify(hint)}?`
          : `allowed fields are ${allowed.join(', ')}`;
    ctx.report([...path, key], `unknown field ${show(key)} in ${what}: ${fix}`);
  }
};

/**
 * `__proto__` as a key of a YAML mapping. js-yaml keeps it as an own property, but any code that
 * copies the mapping by assignment (`out[k] = v`) would drop it silently, so it is refused.
 */
export const PROTO_KEY = '__proto__';

/** Reports a `__proto__` key of `m`, and returns `m` without it. */
export const withoutProtoKey = (
  ctx: Ctx,
  m: Record<string, unknown>,
  path: YamlPath,
): Record<string, unknown> => {
  if (!Object.hasOwn(m, PROTO_KEY)) return m;
  ctx.report(
    [...path, PROTO_KEY],
    `"${PROTO_KEY}" cannot be used as a name here, because JavaScript objects reserve it: rename it`,
  );
  return Object.fromEntries(Object.entries(m).filter(([k]) => k !== PROTO_KEY));
};

/**
 * A mapping at `path`, or a problem (and undefined) when the value is something else. A
 * `__proto__` key is reported and left out (see {@link withoutProtoKey}).
 */
export const readMap = (
  ctx: Ctx,
  v: unknown,
  path: YamlPath,
  what: string,
): Record<string, unknown> | undefined => {
  if (v === undefined || v === null) return undefined;
  if (isRecord(v)) return withoutProtoKey(ctx, v, path);
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

/** A boolean (`true`/`false`, also as quoted text); anything else is a problem. */
export const readBool = (ctx: Ctx, v: unknown, path: YamlPath): boolean | undefined => {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'boolean') return v;
  if (v === 'true' || v === 'false') return v === 'true';
  ctx.report(path, `must be true or false, got ${show(v)}`);
  return undefined;
};

/** The range an integer field accepts; the problem message names it (or `hint`). */
export interface IntRule {
  /** Smallest value allowed. @default no minimum */
  min?: number;
  /** Largest value allowed. @default no maximum */
  max?: number;
  /** Extra value allowed below `min`, such as -1 meaning "unlimited". @default none */
  special?: number;
  /** How the message describes the range. @default derived from `min` and `max` */
  hint?: string;
}

/**
 * An integer (numeric text accepted), checked against `rule`. Only safe integers count: a larger
 * number cannot be held exactly, so `99999999999999999999999` is a problem, not a rounded value.
 */
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
    Number.isSafeInteger(n) &&
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

/**
 * A string or a list of strings (scalars converted) as a list. An empty list item (`[a, null]`,
 * `- ~`) is a problem at the item: unlike an absent field, it cannot mean "use the default".
 */
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
    const s = readRequiredString(ctx, item, [...path, i]);
    if (s !== undefined) out.push(s);
  });
  return out;
};

/** Like {@link readString}, but nothing (`null`, an empty item) is a problem too. */
const readRequiredString = (ctx: Ctx, v: unknown, path: YamlPath): string | undefined => {
  if (v !== undefined && v !== null) return readString(ctx, v, path);
  ctx.report(path, 'must be text, got nothing');
  return undefined;
};

/** A mapping whose values are scalars, as a string record; an empty value is a problem. */
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
    const s = readRequiredString(ctx, val, [...path, k]);
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
