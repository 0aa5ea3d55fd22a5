import type { WriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { resolve } from 'node:path';
import { finished } from 'node:stream/promises';
import {
  expandHome,
  homeOf,
  type ProcessRunner,
  type ProcessSpec,
  type RunningProcess,
} from '@trellis/core';
import type { ExecContext, ExecutionOutcome, Executor, StopPolicy } from '@trellis/engine';
import { NodeProcessRunner } from '../process-runner/node-process-runner.js';
import { FanOutWritable, OutputCapture } from './output-fan-out.js';
import { writeScriptFile, type ScriptFile } from './script-file.js';
import { planShellInvocation } from './shell-invocation.js';

/** Dependencies of {@link ShellExecutor}. */
export interface ShellExecutorDeps {
  /** Starts the step's process. @default new NodeProcessRunner() */
  readonly processes?: ProcessRunner;
}

/** The step's `stdout:` / `stderr:` files, opened for this execution. */
interface Redirects {
  readonly stdout?: WriteStream;
  readonly stderr?: WriteStream;
}

/**
 * Runs `shell` steps (as the peer does): a one-line command through the default or the
 * step's shell, or a script file honouring a shebang; output to the step's log streams and its
 * `stdout:`/`stderr:` files; stop by signal to the whole process group, then SIGKILL. A failing
 * command is data in the outcome, never an exception.
 */
export class ShellExecutor implements Executor {
  readonly #processes: ProcessRunner;

  constructor(deps: ShellExecutorDeps = {}) {
    this.#processes = deps.processes ?? new NodeProcessRunner();
  }

  async run(ctx: ExecContext, onStart?: (pid: number) => void): Promise<ExecutionOutcome> {
    const planned = planShellInvocation(ctx.step, ctx.defaultShell, homeOf(ctx.env));
    if ('problem' in planned) return failed(planned.problem);
    if (ctx.stop.abort.aborted) return failed('the step was stopped before it started');
    const { invocation } = planned;

    const redirects = await openRedirects(ctx);
    if ('problem' in redirects) return failed(redirects.problem);
    let script: ScriptFile | undefined;
    try {
      const args = [...invocation.args];
      if (invocation.script !== undefined) {
        try {
          script = await writeScriptFile(invocation.script, ctx.cwd);
        } catch (e) {
          return failed(`cannot write the script file: ${(e as Error).message}`);
        }
        args.push(script.path);
      }
      const spec = { command: invocation.command, args, cwd: ctx.cwd, env: ctx.env };
      return await this.#execute(ctx, spec, redirects, onStart);
    } finally {
      // Always, also after a stop or a kill: no script is left behind in the step's directory.
      await script?.remove();
      await closeRedirects(redirects, ctx.stderr);
    }
  }

  async #execute(
    ctx: ExecContext,
    spec: ProcessSpec,
    redirects: Redirects,
    onStart: ((pid: number) => void) | undefined,
  ): Promise<ExecutionOutcome> {
    const capture =
      ctx.captureLimit === undefined ? undefined : new OutputCapture(ctx.captureLimit);
    const note = (message: string): void => {
      if (ctx.stderr.writable) ctx.stderr.write(`trellis: ${message}\n`);
    };
    const dropped = (target: NodeJS.WritableStream, err: Error): void => {
      if (target !== ctx.stderr) note(`stopped copying output: ${err.message}`);
    };
    const stdout = new FanOutWritable(
      redirects.stdout ? [ctx.stdout, redirects.stdout] : [ctx.stdout],
      capture && ((chunk) => capture.add(chunk)),
      dropped,
    );
    const stderr = new FanOutWritable(
      redirects.stderr ? [ctx.stderr, redirects.stderr] : [ctx.stderr],
      undefined,
      dropped,
    );

    const proc = this.#processes.start(spec, { stdout, stderr });
    const send = (signal: NodeJS.Signals): void => {
      try {
        proc.kill(signal);
      } catch (e) {
        note(`cannot send ${signal} to process group of ${spec.command}: ${(e as Error).message}`);
      }
    };
    const stopWatch = watchStop(ctx.stop, send);
    let exit: Awaited<RunningProcess['exited']>;
    let pid: number | undefined;
    try {
      pid = await proc.started;
      if (pid !== undefined) reportStart(onStart, pid, send);
      exit = await proc.exited;
    } catch (e) {
      // Only a throwing onStart gets here (a bug in the caller): do not leave the group running.
      await proc.exited;
      throw e;
    } finally {
      stopWatch.dispose();
      // Everything the process wrote has been handed to the fan-outs; let them flush to targets.
      await Promise.all([endWritable(stdout), endWritable(stderr)]);
    }

    return {
      exitCode: exit.exitCode,
      signal: exit.signal,
      ...(pid !== undefined ? { pid } : {}),
      ...(capture ? { output: capture.text(), outputExceeded: capture.exceeded } : {}),
    };
  }
}

const failed = (error: string): ExecutionOutcome => ({ exitCode: null, signal: null, error });

const reportStart = (
  onStart: ((pid: number) => void) | undefined,
  pid: number,
  send: (signal: NodeJS.Signals) => void,
): void => {
  try {
    onStart?.(pid);
  } catch (e) {
    send('SIGKILL');
    throw e;
  }
};

/**
 * On abort: the stop signal to the group, then SIGKILL after the grace period unless the process
 * has exited by then (as the peer does). `dispose` must run once the process exited.
 */
const watchStop = (
  stop: StopPolicy,
  send: (signal: NodeJS.Signals) => void,
): { dispose(): void } => {
  let killTimer: NodeJS.Timeout | undefined;
  const onAbort = (): void => {
    send(stop.signal);
    killTimer = setTimeout(() => send('SIGKILL'), stop.graceMs);
  };
  // The run may have been stopped while the script or redirect files were being prepared.
  if (stop.abort.aborted) onAbort();
  else stop.abort.addEventListener('abort', onAbort, { once: true });
  return {
    dispose: () => {
      // A run-wide signal outlives many steps: leaving listeners would leak them.
      stop.abort.removeEventListener('abort', onAbort);
      clearTimeout(killTimer);
    },
  };
};

/**
 * Opens `stdout:`/`stderr:` (relative to the step's directory, `~` = the step's home) for append,
 * created 0600.
 */
const openRedirects = async (ctx: ExecContext): Promise<Redirects | { problem: string }> => {
  const opened: { stdout?: WriteStream; stderr?: WriteStream } = {};
  for (const stream of ['stdout', 'stderr'] as const) {
    const file = ctx.step[stream];
    if (file === undefined || file === '') continue;
    const path = resolve(ctx.cwd, expandHome(file, homeOf(ctx.env)));
    try {
      const handle = await open(path, 'a', 0o600);
      const out = handle.createWriteStream();
      // Failures surface when the fan-out drops the stream or when it is closed.
      out.on('error', () => undefined);
      opened[stream] = out;
    } catch (e) {
      await closeRedirects(opened, ctx.stderr);
      return { problem: `cannot open the ${stream} file ${path}: ${(e as Error).message}` };
    }
  }
  return opened;
};

const closeRedirects = async (
  redirects: Redirects,
  stderr: NodeJS.WritableStream,
): Promise<void> => {
  await Promise.all(
    [redirects.stdout, redirects.stderr].map(async (out) => {
      if (!out) return;
      try {
        out.end();
        await finished(out);
      } catch (e) {
        if (stderr.writable)
          stderr.write(`trellis: writing ${String(out.path)} failed: ${(e as Error).message}\n`);
      }
    }),
  );
};

const endWritable = async (w: FanOutWritable): Promise<void> => {
  w.end();
  await finished(w);
};
