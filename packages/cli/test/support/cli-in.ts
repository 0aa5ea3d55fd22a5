import { join } from 'node:path';
import { runCli } from '../../src/run-cli.js';

/** What one in-process `trellis` command printed, line by line, and its exit code. */
export interface CliResult {
  readonly code: number;
  readonly out: string[];
  readonly err: string[];
}

/**
 * Runs `trellis <args>` in this process with `dir` as its working and home folder (SVC_HOME
 * `dir/home`, PATH /usr/bin:/bin) plus `env`. Test support only.
 */
export const cliIn = async (
  dir: string,
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<CliResult> => {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, {
    out: (l) => out.push(...l.split('\n')),
    err: (l) => err.push(...l.split('\n')),
    env: { SVC_HOME: join(dir, 'home'), HOME: dir, PATH: '/usr/bin:/bin', ...env },
    cwd: dir,
  });
  return { code, out, err };
};
