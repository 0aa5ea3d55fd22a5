import type { YamlPath } from '../yaml/problem.js';
import type { Param } from '../model/dag.js';
import { ENV_NAME, isRecord, readString, show, type Ctx } from './context.js';

/** One token of the `A=1 B="x y" positional` form, before positional names are assigned. */
export interface ParamToken {
  readonly name?: string;
  readonly value: string;
}

// `name=` with nothing after it (an empty value); or an optional name=, then a double-quoted
// string (with \" escapes), a backtick command, or a non-space run.
const TOKEN =
  /([A-Za-z_][A-Za-z0-9_]*)=(?=\s|$)|(?:([A-Za-z_][A-Za-z0-9_]*)=)?(?:"((?:\\.|[^"\\])*)"|(`[^`]*`)|(\S+))/g;

/**
 * Tokenises the string form of params (`A=1 B="x y" positional`). Quotes are removed and `\"`
 * unescaped; backtick commands are kept verbatim for evaluation at run time.
 */
export const tokenizeParams = (text: string): ParamToken[] => {
  const out: ParamToken[] = [];
  for (const m of text.matchAll(TOKEN)) {
    const [, emptyName, name = emptyName, quoted, backtick, bare] = m;
    const value = quoted !== undefined ? quoted.replace(/\\(.)/gs, '$1') : (backtick ?? bare ?? '');
    out.push(name === undefined ? { value } : { name, value });
  }
  return out;
};

/** Gives positional tokens the names `1`, `2`, ... in order. */
export const nameParams = (tokens: readonly ParamToken[]): Param[] => {
  let pos = 0;
  return tokens.map((t) =>
    t.name === undefined
      ? { name: String(++pos), value: t.value, positional: true }
      : { name: t.name, value: t.value, positional: false },
  );
};

/** `my-param=x`: looks like a named parameter, but the name cannot be a variable. */
const BAD_NAMED = /^([A-Za-z0-9_][A-Za-z0-9_.-]*)=/s;

/**
 * `params` in every form: the string form, a list of `KEY: value` mappings, `KEY=value` strings
 * and plain positional values, or a mapping. Each problem names the entry it is about.
 */
export const readParams = (ctx: Ctx, v: unknown, path: YamlPath): Param[] => {
  if (v === undefined || v === null) return [];
  const tokens: ParamToken[] = [];
  const paths: YamlPath[] = [];
  const badName = (key: string, at: YamlPath): void =>
    ctx.report(
      at,
      `invalid parameter name ${show(key)}: use letters, digits and "_", not starting with a digit`,
    );
  const push = (t: ParamToken, at: YamlPath): void => {
    tokens.push(t);
    paths.push(at);
  };
  /** A positional value that is really a misspelt `NAME=value` is reported, not kept. */
  const positional = (value: string, at: YamlPath): void => {
    const m = BAD_NAMED.exec(value);
    const key = m?.[1];
    if (key !== undefined && !/^\d+$/.test(key) && !ENV_NAME.test(key)) badName(key, at);
    else push({ value }, at);
  };
  const named = (key: string, value: unknown, at: YamlPath): void => {
    if (!ENV_NAME.test(key)) {
      badName(key, at);
      return;
    }
    const s = value === null ? '' : readString(ctx, value, at);
    if (s !== undefined) push({ name: key, value: s }, at);
  };
  if (typeof v === 'string') {
    for (const t of tokenizeParams(v)) {
      if (t.name === undefined) positional(t.value, path);
      else push(t, path);
    }
  } else if (isRecord(v)) for (const [k, val] of Object.entries(v)) named(k, val, [...path, k]);
  else if (Array.isArray(v)) {
    v.forEach((item, i) => {
      const at = [...path, i];
      if (isRecord(item)) for (const [k, val] of Object.entries(item)) named(k, val, [...at, k]);
      else if (typeof item === 'string') {
        const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(item);
        if (m) push({ name: m[1] ?? '', value: m[2] ?? '' }, at);
        else positional(item, at);
      } else if (typeof item === 'number' || typeof item === 'boolean')
        push({ value: String(item) }, at);
      else ctx.report(at, `must be KEY: value, "KEY=value" or a plain value, got ${show(item)}`);
    });
  } else if (typeof v === 'number' || typeof v === 'boolean') push({ value: String(v) }, path);
  else ctx.report(path, `must be a list, a mapping or a "KEY=value ..." string, got ${show(v)}`);

  const params = nameParams(tokens);
  const seen = new Set<string>();
  params.forEach((p, i) => {
    if (!p.positional && seen.has(p.name))
      ctx.report(paths[i] ?? path, `parameter ${show(p.name)} is defined twice`);
    seen.add(p.name);
  });
  return params;
};

const quote = (s: string): string => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/** The spec's `defaultParams`: `KEY="value" "positional"` (tokenizeParams reads it back). */
export const toDefaultParamsString = (params: readonly Param[]): string =>
  params.map((p) => (p.positional ? quote(p.value) : `${p.name}=${quote(p.value)}`)).join(' ');

/** The spec's `params` array of a DAG: `KEY=value`, positional ones as `1=value`. */
export const paramsToStrings = (params: readonly Param[]): string[] =>
  params.map((p) => `${p.name}=${p.value}`);
