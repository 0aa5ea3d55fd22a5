import { jsonValueText, parseJsonPath, readJsonPath } from './json-path.js';

/**
 * One layer of variables: params, outputs, step env, special variables, DAG env... A scope list
 * is ordered nearest first; the first scope that defines a name wins (as the peer does).
 */
export type VarScope = Readonly<Record<string, string>>;

/** Options of {@link expandVars} and {@link expandVarsSync}. */
export interface ExpandOptions {
  /**
   * Runs the text between backticks as a command and resolves to its stdout. When given, each
   * `` `cmd` `` is replaced by that output, trimmed, after the variables inside it are expanded
   * (spec: Variables, "Backtick text runs a command"). The engine injects a shell runner; a
   * rejection propagates to the caller of {@link expandVars}.
   * @default undefined (backticks are left as written)
   */
  readonly backticks?: (command: string, env: Readonly<Record<string, string>>) => Promise<string>;
  /**
   * Whether `backticks` runs commands with a POSIX shell: then a variable inside a command
   * reaches it as a value, never as shell syntax (`env` holds the values; see shell-text.ts).
   * Otherwise values are written into the command text as they are.
   * @default false
   */
  readonly posixShell?: boolean;
  /**
   * Keep `\$` (and, with `backticks`, `` \` ``) as written instead of turning it into a plain
   * `$`. Useful when the result is read again by a shell that must see the escape too.
   * @default false
   */
  readonly keepEscapes?: boolean;
}

const NAME = /^([A-Za-z_][A-Za-z0-9_]*|[0-9]+)(.*)$/s;

// Alternatives, tried left to right at each position:
//   1. `\\`                      kept as written, so `\\$X` still expands X;
//   2. `\$`                      an escaped dollar;
//   3. `'$X'`, `'${X...}'`       a reference wrapped in single quotes, left alone;
//   4. `${...}`                  a name, a positional number, or a name with a JSON path;
//   5. `$NAME`, `$1`             bare form; like sh, a bare positional is one digit (`${10}`).
const REF =
  /\\\\|\\\$|'\$(?:\{[^{}\s]+\}|[A-Za-z_][A-Za-z0-9_]*|[0-9])'|\$\{([^{}\s]+)\}|\$([A-Za-z_][A-Za-z0-9_]*|[0-9])/g;

/** The value of `name` in the nearest scope that defines it (own keys only, never prototypes). */
export const lookupVar = (scopes: readonly VarScope[], name: string): string | undefined => {
  for (const scope of scopes) if (Object.hasOwn(scope, name)) return scope[name];
  return undefined;
};

/**
 * Resolves the text inside `${...}`. An exact key wins first, so a scope may define dotted
 * names itself (step-id references such as `step1.stdout`). Otherwise `NAME.path` reads into
 * NAME parsed as JSON. Anything unresolved yields undefined and stays as written.
 */
const resolveBraced = (scopes: readonly VarScope[], inner: string): string | undefined => {
  const exact = lookupVar(scopes, inner);
  if (exact !== undefined) return exact;
  const m = NAME.exec(inner);
  const [, name = '', rest = ''] = m ?? [];
  if (!m || rest === '') return undefined;
  const raw = lookupVar(scopes, name);
  const path = parseJsonPath(rest);
  if (raw === undefined || path === undefined) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return undefined; // the peer's behaviour: invalid JSON leaves the reference unchanged
  }
  const value = readJsonPath(json, path);
  return value === undefined ? undefined : jsonValueText(value);
};

/**
 * The value a reference stands for: `braced` is the text inside `${...}`, `bare` the name after
 * a lone `$`. Undefined when unresolved (the reference then stays as written).
 */
export const resolveRef = (
  scopes: readonly VarScope[],
  braced: string | undefined,
  bare: string | undefined,
): string | undefined => {
  if (braced !== undefined) return resolveBraced(scopes, braced);
  if (bare !== undefined) return lookupVar(scopes, bare);
  return undefined;
};

/**
 * Expands `${NAME}`, `$NAME`, `$1`/`${1}` and `${NAME.path.to[0].field}` in `text`, without
 * running backtick commands. Unknown names, unreadable JSON and missing paths are left as
 * written; `'$X'` wrapped in single quotes is left alone; `\$` becomes a literal `$`.
 * A value is inserted as it is, also between double quotes (`"${V.name}"` gives `"bob"`).
 */
export const expandVarsSync = (
  text: string,
  scopes: readonly VarScope[],
  opts: Pick<ExpandOptions, 'keepEscapes'> = {},
): string => {
  if (!text.includes('$')) return text;
  return text.replace(REF, (whole: string, braced?: string, bare?: string): string => {
    if (whole === '\\$') return opts.keepEscapes === true ? whole : '$';
    if (braced !== undefined) return resolveBraced(scopes, braced) ?? whole;
    if (bare !== undefined) return lookupVar(scopes, bare) ?? whole;
    return whole; // `\\` or a single-quoted reference
  });
};
