import { parseArgs } from 'node:util';
import {
  AppError,
  ConfigError,
  nodeStatusLabel,
  runStatusLabel,
  RunStatus,
  type NodeStatus,
} from '@trellis/core';
import type { StartedRun } from '@trellis/services';
import type { DagRunRecord } from '@trellis/spec';
import { ExitCode, type CliIo } from '../io.js';
import type { Runtime } from '../wiring/runtime.js';

/** One flag of a command, as node:util parseArgs takes it. */
export interface OptionSpec {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
}

/** Flags every store-using command accepts. */
export const STORE_OPTIONS = {
  home: { type: 'string' },
  config: { type: 'string' },
  dags: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies Record<string, OptionSpec>;

/** Parsed flag values, typed by their specs. */
export type FlagValues<O> = {
  [K in keyof O]?: O[K] extends { type: 'boolean' } ? boolean : string;
};

/** A command's parsed arguments; `rest` holds the words after `--` (DAG params). */
export interface CommandArgs<O> {
  readonly values: FlagValues<O & typeof STORE_OPTIONS>;
  readonly positionals: string[];
  readonly rest: string[];
}

/** Parses a command's arguments strictly (an unknown flag is a usage error). */
export const parseCommandArgs = <O extends Record<string, OptionSpec>>(
  args: readonly string[],
  options: O,
): CommandArgs<O> => {
  const dashdash = args.indexOf('--');
  const own = dashdash === -1 ? [...args] : args.slice(0, dashdash);
  const rest = dashdash === -1 ? [] : args.slice(dashdash + 1);
  const parsed = parseArgs({
    args: own,
    options: { ...STORE_OPTIONS, ...options },
    allowPositionals: true,
    strict: true,
  });
  return {
    values: parsed.values,
    positionals: parsed.positionals,
    rest,
  };
};

/** Params from `-p` and the words after `--` (the latter win, as later overrides). */
export const paramsFrom = (p: string | undefined, rest: readonly string[]): string | undefined => {
  const quoted = rest.map((w) =>
    /^[^\s"]*$/.test(w)
      ? w
      : w.replace(
          /^([A-Za-z_][A-Za-z0-9_]*=)?(.*)$/s,
          (_m, k: string | undefined, v: string) => `${k ?? ''}"${v.replace(/(["\\])/g, '\\$1')}"`,
        ),
  );
  const parts = [p, quoted.join(' ')].filter(
    (x): x is string => x !== undefined && x.trim() !== '',
  );
  return parts.length > 0 ? parts.join(' ') : undefined;
};

/**
 * Runs a command body with a runtime, turning refusals into messages: AppError -> exit 1 with its
 * message, ConfigError -> exit 2.
 */
export const withRuntime = async (
  name: string,
  io: CliIo,
  flags: { home?: string | undefined; config?: string | undefined; dags?: string | undefined },
  body: (rt: Runtime) => Promise<ExitCode>,
): Promise<ExitCode> => {
  try {
    // the runtime (store, engine, executors) is loaded when a command needs it
    const { makeRuntime } = await import('../wiring/runtime.js');
    const rt = await makeRuntime(
      io,
      { home: flags.home, config: flags.config, dags: flags.dags },
      { inheritTraceparent: true },
    );
    try {
      return await body(rt);
    } finally {
      // spans of the command's runs go out before the process exits (bounded by otel.timeout)
      await rt.tracer.shutdown();
    }
  } catch (e) {
    if (e instanceof ConfigError) {
      io.err(`trellis ${name}: ${e.message}`);
      return ExitCode.Usage;
    }
    if (AppError.is(e)) {
      io.err(`trellis ${name}: ${e.message}`);
      return ExitCode.Failure;
    }
    throw e;
  }
};

const SYMBOL: Record<number, string> = { 1: '>', 2: 'x', 3: '-', 4: 'ok', 5: 'skip', 6: '~' };

/** A step transition as printed: `symbol` and `text` after the DAG prefix of a child run. */
interface Transition {
  readonly dagRunId: string;
  readonly rootId: string;
  readonly dagName: string;
  readonly symbol: string;
  readonly text: string;
}

/**
 * Prints step transitions of a run (and of its children) as they happen. Returns `follow`, to be
 * called with the run's id once it is known: transitions before that (a first step may start
 * before `start` returns) are kept and printed then.
 */
export const followProgress = (rt: Runtime, io: CliIo): ((dagRunId: string) => void) => {
  let root: string | undefined;
  const early: Transition[] = [];
  const print = (t: Transition, id: string): void => {
    if (t.dagRunId !== id && t.rootId !== id) return;
    io.out(`  ${t.symbol} ${t.dagRunId === id ? '' : `${t.dagName} > `}${t.text}`);
  };
  rt.events.on('node:statusChanged', (record, name, status: NodeStatus) => {
    if (status === 0) return;
    const node = [
      ...record.nodes,
      record.onSuccess,
      record.onFailure,
      record.onCancel,
      record.onExit,
    ].find((n) => n?.step.name === name);
    const took =
      node && node.startedAt && node.finishedAt
        ? ` (${((Date.parse(node.finishedAt) - Date.parse(node.startedAt)) / 1000).toFixed(1)}s)`
        : '';
    const err = node?.error ? `: ${node.error}` : '';
    const t: Transition = {
      dagRunId: record.dagRunId,
      rootId: record.root.dagRunId,
      dagName: record.name,
      symbol: (SYMBOL[status] ?? '?').padEnd(4),
      text: `${name} ${status === 1 ? 'started' : `${nodeStatusLabel[status]}${took}${err}`}`,
    };
    if (root === undefined) early.push(t);
    else print(t, root);
  });
  return (dagRunId) => {
    root = dagRunId;
    for (const t of early.splice(0)) print(t, dagRunId);
  };
};

/** The closing line of a foreground run, and its exit code: 0 only for a finished run. */
export const finishLine = (io: CliIo, r: DagRunRecord): ExitCode => {
  io.out(
    `run ${r.dagRunId} of DAG "${r.name}": ${runStatusLabel[r.status]}${r.error ? ` (${r.error})` : ''}`,
  );
  io.out(`log: ${r.log}`);
  return r.status === RunStatus.Succeeded ? ExitCode.Ok : ExitCode.Failure;
};

/** Stops the run on SIGINT/SIGTERM (the run ends cancelled and its handlers run). */
export const stopOnSignals = (io: CliIo, stop: () => Promise<void>): (() => void) => {
  const handler = (sig: NodeJS.Signals): void => {
    io.err(`received ${sig}: stopping the run (its steps get their stop signal)`);
    stop().catch((e: unknown) => io.err(`could not stop: ${(e as Error).message}`));
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
};

/**
 * The DAG name a command argument means: the `name` of the DAG file it names (a path, or a name
 * in the DAGs folder; also when the file now has problems), else the argument itself (a DAG that
 * has runs but no file any more).
 */
export const dagNameOf = (rt: Runtime, ref: string, cwd: string): string =>
  rt.dags.nameOf(ref, cwd);

/**
 * Runs in the foreground what `start` starts: prints each step transition, the `startedLine`,
 * stops the run on SIGINT/SIGTERM, and ends with the closing line; exit 0 only for a finished run.
 */
export const runInForeground = async (
  rt: Runtime,
  io: CliIo,
  start: () => Promise<StartedRun>,
  startedLine: (record: DagRunRecord) => string,
): Promise<ExitCode> => {
  const follow = followProgress(rt, io);
  const started = await start();
  const { name, dagRunId } = started.record;
  if (started.queued) {
    io.out(
      `run ${dagRunId} of DAG "${name}" is queued in queue "${started.record.queue}" (it is full or others wait); ` +
        'trellis start-all or trellis scheduler starts it in its turn',
    );
    return ExitCode.Ok;
  }
  // before anything is printed: whoever reacts to the output may signal at once
  const unhook = stopOnSignals(io, () => rt.runs.stop({ name, dagRunId }));
  io.out(startedLine(started.record));
  follow(dagRunId);
  try {
    return finishLine(io, await started.done);
  } finally {
    unhook();
  }
};
