import { PassThrough } from 'node:stream';
import type { ProcessRunner } from '@trellis/core';
import type { CommandRunner } from '@trellis/engine';
import { NodeProcessRunner } from '../process-runner/node-process-runner.js';

/** Most stdout a condition or backtick command may return; the rest is dropped. */
const MAX_STDOUT_BYTES = 1024 * 1024;

/**
 * Runs preconditions, repeat conditions and backtick substitutions as `<shell> -c <command>`,
 * capturing stdout (stderr is discarded). The shell may carry arguments (`bash -o pipefail`).
 * An aborted command is killed (its whole process group) and reported as exit code 130.
 */
export class ShellCommandRunner implements CommandRunner {
  constructor(private readonly processes: ProcessRunner = new NodeProcessRunner()) {}

  async run(
    command: string,
    opts: {
      cwd: string;
      env: Readonly<Record<string, string>>;
      shell: string;
      abort?: AbortSignal;
    },
  ): Promise<{ exitCode: number; stdout: string }> {
    const [shell = 'sh', ...shellArgs] = opts.shell.trim().split(/\s+/);
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    const chunks: Buffer[] = [];
    let size = 0;
    stdout.on('data', (c: Buffer) => {
      if (size < MAX_STDOUT_BYTES) chunks.push(c);
      size += c.length;
    });
    stderr.resume();
    const proc = this.processes.start(
      { command: shell, args: [...shellArgs, '-c', command], cwd: opts.cwd, env: opts.env },
      { stdout, stderr },
    );
    const kill = (): void => proc.kill('SIGKILL');
    opts.abort?.addEventListener('abort', kill, { once: true });
    try {
      const { exitCode } = await proc.exited;
      return {
        exitCode: exitCode ?? 130,
        stdout: Buffer.concat(chunks).toString('utf8').slice(0, MAX_STDOUT_BYTES),
      };
    } finally {
      opts.abort?.removeEventListener('abort', kill);
    }
  }
}
