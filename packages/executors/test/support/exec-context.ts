import type { Writable } from 'node:stream';
import type { ExecContext } from '@trellis/engine';
import { parseDagFile, type Dag } from '@trellis/spec';
import { TextSink } from './text-sink.js';

/** What a test may change about the context. */
export interface ContextSetup {
  readonly cwd?: string;
  readonly captureLimit?: number;
  readonly env?: Record<string, string>;
  readonly graceMs?: number;
  /** The signal a stop sends first. @default 'SIGTERM' */
  readonly signal?: NodeJS.Signals;
  /** Where the step's stdout goes instead of the `out` sink. */
  readonly stdout?: Writable;
}

/** A test context: the ExecContext and its sinks and stop switch. */
export interface TestContext {
  readonly ctx: ExecContext;
  readonly dag: Dag;
  readonly out: TextSink;
  readonly err: TextSink;
  readonly stopper: AbortController;
}

/**
 * An ExecContext for the first step of a DAG written as in a DAG file (the spec package compiles
 * it, so executors see exactly what a run gives them). Throws on a DAG with problems.
 */
export const contextOf = (
  dagDoc: Record<string, unknown>,
  dir: string,
  setup: ContextSetup = {},
): TestContext => {
  const file = parseDagFile(JSON.stringify(dagDoc), { location: `${dir}/dag.yaml`, cwd: dir });
  if (file.errors.length > 0) throw new Error(`test DAG is invalid:\n${file.errors.join('\n')}`);
  const dag = file.main.dag;
  const step = dag.steps[0];
  if (!step) throw new Error('the test DAG has no step');
  const stopper = new AbortController();
  const out = new TextSink();
  const err = new TextSink();
  const ctx: ExecContext = {
    step,
    dag,
    cwd: setup.cwd ?? dir,
    env: { PATH: '/usr/local/bin:/usr/bin:/bin', ...setup.env },
    defaultShell: '/bin/sh',
    stdout: setup.stdout ?? out,
    stderr: err,
    stop: {
      abort: stopper.signal,
      signal: setup.signal ?? 'SIGTERM',
      graceMs: setup.graceMs ?? 5000,
    },
    ...(setup.captureLimit !== undefined ? { captureLimit: setup.captureLimit } : {}),
    run: { name: dag.name, dagRunId: 'run-1', root: { name: dag.name, dagRunId: 'run-1' } },
  };
  return { ctx, dag, out, err, stopper };
};

/** An ExecContext for one step (`{name: 's', ...fields}`) of an otherwise empty DAG. */
export const stepContext = (
  fields: Record<string, unknown>,
  dir: string,
  setup: ContextSetup = {},
  dagFields: Record<string, unknown> = {},
): TestContext => contextOf({ ...dagFields, steps: [{ name: 's', ...fields }] }, dir, setup);
