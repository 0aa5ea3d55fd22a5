import { spawn, type ChildProcess } from 'node:child_process';
import type { ProcessRunner, ProcessSpec, RunningProcess } from '@trellis/core';
import { killGroup, startFailureMessage } from './process-group.js';

type Exit = Awaited<RunningProcess['exited']>;

/** Options of {@link NodeProcessRunner}. */
export interface NodeProcessRunnerOptions {
  /**
   * How long to keep reading stdout/stderr after the process exited, in ms. A background process
   * that inherited the pipes (`server &`) would otherwise keep the step running until it exits;
   * past this the pipes are closed and `exited` resolves. @default 2000
   */
  readonly outputDrainMs?: number;
}

/**
 * Starts real child processes. Each child leads its own process group (`detached`), so `kill`
 * reaches everything the command started. The child's stdout/stderr are piped into the given
 * streams with backpressure; those streams are never ended (the caller owns them). `exited`
 * resolves once the output has been handed over, and never rejects: a spawn failure resolves with
 * exit code 127 after a message on `stderr`.
 */
export class NodeProcessRunner implements ProcessRunner {
  readonly #drainMs: number;

  constructor(options: NodeProcessRunnerOptions = {}) {
    this.#drainMs = options.outputDrainMs ?? 2000;
  }

  start(
    spec: ProcessSpec,
    io: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream },
  ): RunningProcess {
    let child: ChildProcess;
    try {
      child = spawn(spec.command, [...spec.args], {
        cwd: spec.cwd,
        env: spec.env,
        detached: true, // setsid(): the child leads a new process group
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (e) {
      // Synchronous refusals (e.g. a NUL byte in an argument) are failures to start too.
      io.stderr.write(startFailureMessage(spec, e as NodeJS.ErrnoException));
      return {
        started: Promise.resolve(undefined),
        exited: Promise.resolve({ exitCode: 127, signal: null }),
        kill() {},
      };
    }
    child.stdout?.pipe(io.stdout, { end: false });
    child.stderr?.pipe(io.stderr, { end: false });
    const pid = child.pid;
    return {
      started: Promise.resolve(pid),
      exited: this.#whenExited(child, spec, io.stderr),
      kill: (sig) => killGroup(pid, sig),
    };
  }

  #whenExited(
    child: ChildProcess,
    spec: ProcessSpec,
    stderr: NodeJS.WritableStream,
  ): Promise<Exit> {
    return new Promise<Exit>((resolve) => {
      let drainTimer: NodeJS.Timeout | undefined;
      let settled = false;
      const settle = (exit: Exit): void => {
        if (settled) return;
        settled = true;
        clearTimeout(drainTimer);
        resolve(exit);
      };
      child.on('error', (err) => {
        // Only a failed spawn leaves pid unset; other 'error's (none expected: we never use
        // child.kill or IPC) must still have a listener so they cannot crash the process.
        if (child.pid !== undefined) return;
        stderr.write(startFailureMessage(spec, err));
        settle({ exitCode: 127, signal: null });
      });
      // 'close' comes after 'exit' once both pipes reached EOF: all output has been passed on.
      child.once('close', (exitCode, signal) => settle({ exitCode, signal }));
      child.once('exit', (exitCode, signal) => {
        drainTimer = setTimeout(() => {
          // Something else in the group still holds the pipes open: stop reading and return.
          child.stdout?.unpipe().destroy();
          child.stderr?.unpipe().destroy();
          settle({ exitCode, signal });
        }, this.#drainMs);
      });
    });
  }
}
