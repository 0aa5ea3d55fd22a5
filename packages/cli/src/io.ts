/** What a CLI command may touch of its process: output, environment, working directory. */
export interface CliIo {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
  /** Environment variables (the composition root passes `readProcessEnv()`). */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
}

/**
 * Exit codes (docs/cli.md, "Exit codes"): 0 success; 1 the command ran and found a failure (a
 * failed or partially succeeded run, a refused request); 2 usage or not available; 3 the run
 * ended cancelled; 4 `--wait-timeout` passed before the run ended; 5 the server could not be
 * used (unreachable, credentials refused, a server error, an answer that is not the API's); 6 a
 * local `start` only queued the run (nothing in this process runs it) and was not told to wait.
 */
export const ExitCode = {
  Ok: 0,
  Failure: 1,
  Usage: 2,
  Cancelled: 3,
  WaitTimeout: 4,
  ServerError: 5,
  Queued: 6,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** The environment as a plain record of defined values. */
export const definedEnv = (env: CliIo['env']): Record<string, string> =>
  Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
