/**
 * The system environment a step process may see, and `.env` files (spec: Root fields `dotenv`;
 * Variables).
 */

/** System variables passed to step processes and child DAGs by name (spec: Variables). */
export const SYSTEM_ENV_NAMES: readonly string[] = ['PATH', 'HOME', 'LANG', 'TZ', 'SHELL'];

/** System variables passed to step processes and child DAGs by prefix (spec: Variables). */
export const SYSTEM_ENV_PREFIXES: readonly string[] = ['SVC_', 'LC_', 'DAG_'];

/** True when the system variable `name` may reach a step process (spec: Variables). */
export const isPassedSystemEnvName = (name: string): boolean =>
  SYSTEM_ENV_NAMES.includes(name) || SYSTEM_ENV_PREFIXES.some((p) => name.startsWith(p));

/**
 * The part of the system environment that step processes and child DAGs receive: `PATH`,
 * `HOME`, `LANG`, `TZ`, `SHELL` and names starting `SVC_`, `LC_`, `DAG_`; other variables must
 * be set in the DAG `env` (spec: Variables, 1.23.0 behaviour). Unlike the peer we do not add
 * `LD_LIBRARY_PATH`: the spec's list wins. Entries whose value is undefined are dropped, so a
 * `NodeJS.ProcessEnv`-shaped record can be passed as is. Every system variable stays usable for
 * `${VAR}` expansion; only the process environment is filtered.
 */
export const filterSystemEnv = (
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env))
    if (value !== undefined && isPassedSystemEnvName(name)) out[name] = value;
  return out;
};

/** One `KEY=value` assignment of a `.env` file, in file order. */
export interface DotenvEntry {
  readonly name: string;
  readonly value: string;
}

/** What {@link parseDotenv} read: the assignments, and one message per line it could not read. */
export interface ParsedDotenv {
  readonly entries: DotenvEntry[];
  /** `line N: ...` messages; the caller prefixes the file name. */
  readonly problems: string[];
}

const ASSIGNMENT = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/s;
const DOUBLE_ESCAPES: Readonly<Record<string, string>> = {
  n: '\n',
  r: '\r',
  t: '\t',
  '"': '"',
  '\\': '\\',
  $: '$',
};

/** Processes `\n`, `\r`, `\t`, `\"`, `\\` and `\$`; any other backslash is kept as written. */
const unescapeDouble = (s: string): string =>
  s.replace(/\\(.)/gs, (whole: string, c: string) => DOUBLE_ESCAPES[c] ?? whole);

/** Index of the quote that closes a value opened by `quote`, or -1. */
const closingQuote = (s: string, quote: string): number => {
  for (let i = 0; i < s.length; i++) {
    if (quote === '"' && s[i] === '\\') i++;
    else if (s[i] === quote) return i;
  }
  return -1;
};

/** An unquoted value: trimmed, with a ` # comment` at its end removed. */
const bareValue = (s: string): string => s.replace(/(^|\s)#.*$/s, '').trim();

/**
 * Reads a `.env` file: `KEY=value` lines, an optional `export ` before the name, `#` comment
 * lines and blank lines. `'single'` quotes keep text literally; `"double"` quotes process `\n`,
 * `\"` and the other usual escapes; a quoted value may span lines. An unquoted value ends at
 * ` #` (an inline comment). Values are returned as written otherwise: expanding `${VAR}` inside
 * them is the caller's choice. Never throws; bad lines are reported and skipped.
 */
export const parseDotenv = (text: string): ParsedDotenv => {
  const entries: DotenvEntry[] = [];
  const problems: string[] = [];
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const lineNo = i + 1;
    // Only the start is trimmed: the end may be inside a quoted value spanning lines.
    const line = (lines[i] ?? '').trimStart();
    if (line.trim() === '' || line.startsWith('#')) continue;
    const m = ASSIGNMENT.exec(line);
    if (!m) {
      problems.push(`line ${lineNo}: expected KEY=value, got ${JSON.stringify(line.trimEnd())}`);
      continue;
    }
    const [, name = '', rest = ''] = m;
    const quote = rest[0];
    if (quote !== '"' && quote !== "'") {
      entries.push({ name, value: bareValue(rest) });
      continue;
    }
    // A quoted value: join following lines until the closing quote.
    let body = rest.slice(1);
    let end = closingQuote(body, quote);
    let last = i;
    while (end < 0 && last + 1 < lines.length) {
      body += `\n${lines[++last] ?? ''}`;
      end = closingQuote(body, quote);
    }
    if (end < 0) {
      problems.push(
        `line ${lineNo}: the value of ${name} opens a ${quote} quote that is never closed`,
      );
      i = last;
      continue;
    }
    const after = body.slice(end + 1).trim();
    if (after !== '' && !after.startsWith('#'))
      problems.push(
        `line ${last + 1}: unexpected text ${JSON.stringify(after)} after the quoted value of ${name}`,
      );
    else {
      const raw = body.slice(0, end);
      entries.push({ name, value: quote === '"' ? unescapeDouble(raw) : raw });
    }
    i = last;
  }
  return { entries, problems };
};
