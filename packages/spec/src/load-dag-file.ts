import type { Dag } from './model/dag.js';
import { Ctx, show } from './normalize/context.js';
import { normalizeDag } from './normalize/dag.js';
import { formatProblem, type Problem } from './yaml/problem.js';
import { parseYaml } from './yaml/parse-yaml.js';

/** One DAG of a file with its own problems. */
export interface ParsedDag {
  readonly dag: Dag;
  readonly problems: readonly Problem[];
}

/** A parsed DAG file: the main DAG (first document), the other DAGs, and every problem. */
export interface DagFile {
  readonly main: ParsedDag;
  /** DAGs defined in later documents of the same file (spec: `localDags`). */
  readonly localDags: readonly ParsedDag[];
  /** Problems of the file as a whole (YAML syntax, document names). */
  readonly fileProblems: readonly Problem[];
  /** Every problem of the file, as one-line strings (the API's `errors`). */
  readonly errors: readonly string[];
  readonly valid: boolean;
}

/** How {@link parseDagFile} names, places and cross-checks the DAGs of one text. */
export interface ParseDagOptions {
  /** Path of the file: the default name and workingDir, and the name used in messages. */
  readonly location?: string;
  /** A name given by the caller (API `name`), which wins over the first document's own name. */
  readonly name?: string;
  /**
   * Whether a child DAG named by `run:` exists outside this file (in the DAGs folder). When
   * absent, such references are not checked.
   */
  readonly dagExists?: (nameOrPath: string) => boolean;
  /** Directory for the default workingDir of an inline spec. @default process.cwd() */
  readonly cwd?: string;
}

/**
 * Parses the YAML text of a DAG file: one DAG, or several separated by `---` (later documents
 * must have a name). Never throws for bad content; every problem is returned as data.
 */
export const parseDagFile = (text: string, opts: ParseDagOptions = {}): DagFile => {
  const cwd = opts.cwd ?? process.cwd();
  const parsed = parseYaml(text, opts.location);
  const fileProblems: Problem[] = [...parsed.problems];
  const docs = parsed.documents.filter((d) => d.value !== null);
  const dags: ParsedDag[] = [];
  const localDagNames = new Set(
    docs.flatMap((d) => (isRecordWithName(d.value) ? [String(d.value.name)] : [])),
  );

  docs.forEach((doc, i) => {
    const ctx = new Ctx(doc.sourceMap);
    const isMain = i === 0;
    // A document that is not a mapping gets its own problem from normalizeDag.
    if (!isMain && isRecord(doc.value) && !isRecordWithName(doc.value))
      ctx.report(
        [],
        `DAG number ${i + 1} in this file has no name: every DAG after the first needs name: <name>`,
      );
    const dag = normalizeDag(ctx, doc.value, {
      ...(opts.location ? { location: opts.location } : {}),
      ...(isMain && opts.name !== undefined ? { name: opts.name } : {}),
      isMain,
      cwd,
      localDagNames,
      ...(opts.dagExists ? { dagExists: opts.dagExists } : {}),
    });
    dags.push({ dag, problems: sortByLine(ctx.problems) });
  });

  if (parsed.problems.length === 0 && docs.length === 0)
    fileProblems.push({ path: '', message: 'the file holds no DAG: write at least steps:' });

  const seen = new Map<string, number>();
  dags.forEach((d, i) => {
    if (!d.dag.name) return;
    const first = seen.get(d.dag.name);
    if (first === undefined) {
      seen.set(d.dag.name, i);
      return;
    }
    const pos = docs[i]?.sourceMap.positionOf(['name']);
    fileProblems.push({
      path: 'name',
      message: `DAG name ${show(d.dag.name)} is also used by DAG number ${first + 1} of this file: names in one file must be unique`,
      ...(pos ? { line: pos.line } : {}),
    });
  });

  const main = dags[0] ?? { dag: stubDag(opts, cwd), problems: [] };
  const localDags = dags.slice(1);
  const all = sortByLine([...fileProblems, ...dags.flatMap((d) => d.problems)]);
  return { main, localDags, fileProblems, errors: all.map(formatProblem), valid: all.length === 0 };
};

/** A placeholder main DAG for a file with no usable document, named after the file. */
const stubDag = (opts: ParseDagOptions, cwd: string): Dag => {
  const ctx = new Ctx();
  return normalizeDag(
    ctx,
    { steps: [] },
    {
      ...(opts.location ? { location: opts.location } : {}),
      ...(opts.name !== undefined ? { name: opts.name } : {}),
      isMain: true,
      cwd,
    },
  );
};

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const isRecordWithName = (v: unknown): v is { name: unknown } =>
  isRecord(v) && 'name' in v && v.name !== null && v.name !== undefined;

/** Problems in source order; those without a position last, in the order found. */
const sortByLine = (problems: readonly Problem[]): Problem[] =>
  problems
    .map((p, i) => ({ p, i }))
    .sort((a, b) => (a.p.line ?? Infinity) - (b.p.line ?? Infinity) || a.i - b.i)
    .map(({ p }) => p);
