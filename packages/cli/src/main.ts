import { readProcessEnv } from '@trellis/core';
import type { CliIo } from './io.js';
import { runCli } from './run-cli.js';
import { tuneDaemonHeapFor } from './wiring/daemon-heap.js';

/**
 * The directory relative paths resolve against: where the user typed the command. `pnpm trellis`
 * runs the script in the repository root and passes the user's directory as `INIT_CWD`.
 */
export const userCwd = (env: CliIo['env'], processCwd: string): string =>
  env.npm_lifecycle_event === 'trellis' && env.INIT_CWD ? env.INIT_CWD : processCwd;

/** What the binary takes from its process; tests pass their own. */
export interface ProcessPorts {
  readonly env: CliIo['env'];
  readonly cwd: string;
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
}

/** The CliIo of a process: one line per write, paths relative to {@link userCwd}. */
export const processIo = (p: ProcessPorts): CliIo => ({
  out: (line) => p.stdout.write(`${line}\n`),
  err: (line) => p.stderr.write(`${line}\n`),
  env: p.env,
  cwd: userCwd(p.env, p.cwd),
});

/** The composition root of the `trellis` binary. */
export const main = async (argv: readonly string[] = process.argv.slice(2)): Promise<void> => {
  // a long-running command's heap is set up before its command loads (the binary did it already,
  // before the CLI's modules: tests and other callers of main() get it here)
  tuneDaemonHeapFor(argv);
  process.exitCode = await runCli(
    argv,
    processIo({
      env: readProcessEnv(),
      cwd: process.cwd(),
      stdout: process.stdout,
      stderr: process.stderr,
    }),
  );
};
