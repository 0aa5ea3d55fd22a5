import { readFileSync } from 'node:fs';
import { load } from 'js-yaml';

/*
 * The expectation file of one corpus DAG (tests/corpus/expect/<name>.yaml), read strictly: an
 * unknown key or a value of the wrong type is an error naming the file and the key, so a typo in
 * an expectation cannot silently check nothing. tests/corpus/README.md describes every key.
 */

export const RUN_STATUSES = ['succeeded', 'failed', 'cancelled', 'partial'] as const;
export const NODE_STATUSES = [
  'not started',
  'succeeded',
  'failed',
  'cancelled',
  'skipped',
  'partial',
] as const;
/** The fixes not yet merged on this branch (tests/corpus/README.md); a DAG that needs one is marked. */
export const PENDING_FIXES = ['a', 'b', 'c', 'd', 'e', 'f'] as const;

/** A text check: exact text, or `{has, lacks, match}` (substrings present / absent, a regex). */
export type TextExpect = string | { has?: string[]; lacks?: string[]; match?: string };

export interface NodeExpect {
  status: (typeof NODE_STATUSES)[number];
  stdout?: TextExpect;
  stderr?: TextExpect;
  /** The node's output variables, exactly (name -> value). */
  outputs?: Record<string, string>;
  retryCount?: number;
  doneCount?: number;
  exitCode?: number;
  /** A substring of the node's error; `''` = no error. */
  error?: string;
  /** The child runs this node started, in order. */
  children?: ChildExpect[];
}

export interface ChildExpect {
  dag: string;
  status: (typeof RUN_STATUSES)[number];
  /** The child run's params (name -> value); only the names given are checked. */
  params?: Record<string, string>;
  /** Every step of the child run, when given. */
  steps?: Record<string, NodeExpect>;
}

export interface HttpExpect {
  method: string;
  path: string;
  /** Times this method and path was requested. @default at least once */
  count?: number;
  body?: TextExpect;
  headers?: Record<string, string>;
}

export interface MailExpect {
  to: string[];
  subject?: string;
  body?: TextExpect;
}

export interface Expectation {
  pendingFix?: (typeof PENDING_FIXES)[number];
  /** Start parameters: JSON object text or the `KEY=value` form. */
  params?: string;
  /** Files written before the run, path relative to the run's HOME -> content. */
  files?: Record<string, string>;
  /**
   * Stop the run (as `stop` does) once this step is running, and (`printed`) once its stdout
   * holds that text (a step that first installs a signal trap says when it is in place).
   */
  stopWhen?: { step: string; printed?: string };
  status: (typeof RUN_STATUSES)[number];
  /** A substring of the run's own error; `''` = none. */
  error?: string;
  /** The run's final params (name -> value); only the names given are checked. */
  runParams?: Record<string, string>;
  /** Every step of the run: the record's step names must be exactly these keys. */
  steps: Record<string, NodeExpect>;
  /** The handler nodes that ran; a handler not listed must not have run. */
  handlers?: Partial<Record<'onSuccess' | 'onFailure' | 'onCancel' | 'onExit', NodeExpect>>;
  /** Substrings of the run log. */
  log?: string[];
  /** The folder, relative to HOME, the run log must be written under (`logDir`). */
  runLogUnder?: string;
  /** Files after the run, path relative to HOME -> text check; `null` = must not exist. */
  homeFiles?: Record<string, TextExpect | null>;
  /** Requests the corpus HTTP server received during the run. */
  http?: HttpExpect[];
  /** Mails the SMTP sink received during the run, exactly these (in any order). */
  mail?: MailExpect[];
}

type Shape = Record<string, (v: unknown, at: string) => void>;

const fail = (at: string, what: string): never => {
  throw new Error(`${at}: ${what}`);
};
const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const str = (v: unknown, at: string): void => {
  if (typeof v !== 'string') fail(at, `expected a string, got ${JSON.stringify(v)}`);
};
const int = (v: unknown, at: string): void => {
  if (!Number.isInteger(v)) fail(at, `expected an integer, got ${JSON.stringify(v)}`);
};
const oneOf =
  (values: readonly string[]) =>
  (v: unknown, at: string): void => {
    if (typeof v !== 'string' || !values.includes(v))
      fail(at, `expected one of ${values.join(', ')}, got ${JSON.stringify(v)}`);
  };
const listOf =
  (item: (v: unknown, at: string) => void) =>
  (v: unknown, at: string): void => {
    if (!Array.isArray(v)) return fail(at, 'expected a list');
    v.forEach((x, i) => item(x, `${at}[${i}]`));
  };
const mapOf =
  (value: (v: unknown, at: string) => void) =>
  (v: unknown, at: string): void => {
    if (!isObj(v)) return fail(at, 'expected a mapping');
    for (const [k, x] of Object.entries(v)) value(x, `${at}.${k}`);
  };
const obj =
  (shape: Shape, required: readonly string[] = []) =>
  (v: unknown, at: string): void => {
    if (!isObj(v)) return fail(at, 'expected a mapping');
    for (const r of required) if (!(r in v)) fail(at, `missing "${r}"`);
    for (const [k, x] of Object.entries(v)) {
      const check = shape[k];
      if (!check) fail(at, `unknown key "${k}" (known: ${Object.keys(shape).join(', ')})`);
      else check(x, `${at}.${k}`);
    }
  };

const text = (v: unknown, at: string): void => {
  if (typeof v === 'string') return;
  obj({ has: listOf(str), lacks: listOf(str), match: str })(v, at);
};
const strMap = mapOf(str);

const node = (v: unknown, at: string): void =>
  obj(
    {
      status: oneOf(NODE_STATUSES),
      stdout: text,
      stderr: text,
      outputs: strMap,
      retryCount: int,
      doneCount: int,
      exitCode: int,
      error: str,
      children: listOf(child),
    },
    ['status'],
  )(v, at);
const child = (v: unknown, at: string): void =>
  obj({ dag: str, status: oneOf(RUN_STATUSES), params: strMap, steps: mapOf(node) }, [
    'dag',
    'status',
  ])(v, at);

const expectation = obj(
  {
    pendingFix: oneOf(PENDING_FIXES),
    params: str,
    files: strMap,
    stopWhen: obj({ step: str, printed: str }, ['step']),
    status: oneOf(RUN_STATUSES),
    error: str,
    runParams: strMap,
    steps: mapOf(node),
    handlers: obj({ onSuccess: node, onFailure: node, onCancel: node, onExit: node }),
    log: listOf(str),
    runLogUnder: str,
    homeFiles: mapOf((v, at) => (v === null ? undefined : text(v, at))),
    http: listOf(
      obj({ method: str, path: str, count: int, body: text, headers: strMap }, ['method', 'path']),
    ),
    mail: listOf(obj({ to: listOf(str), subject: str, body: text }, ['to'])),
  },
  ['status', 'steps'],
);

/** Reads and checks one expectation file. */
export const readExpectation = (file: string): Expectation => {
  const data = load(readFileSync(file, 'utf8'));
  expectation(data, file);
  return data as Expectation;
};
