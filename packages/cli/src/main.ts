import { readProcessEnv } from '@trellis/core';
import { runCli } from './run-cli.js';

/** The composition root of the `trellis` binary. */
export const main = async (argv: readonly string[] = process.argv.slice(2)): Promise<void> => {
  const code = await runCli(argv, {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    env: readProcessEnv(),
    cwd: process.cwd(),
  });
  process.exitCode = code;
};
