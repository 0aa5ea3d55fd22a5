import { AppError, ConfigError, nodeStatusLabel, type NodeStatus } from '@trellis/core';
import { ExitCode, type CliIo } from '../io.js';
import type { Runtime } from '../wiring/runtime.js';

export { parseCommandArgs } from './flags.js';

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
      await rt.closeStore();
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
