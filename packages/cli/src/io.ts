/** What a CLI command may touch of its process: output, environment, working directory. */
export interface CliIo {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
  /** Environment variables (the composition root passes `readProcessEnv()`). */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
}

/** Exit codes: 0 success, 1 the command ran and found a failure, 2 usage or not available. */
export const ExitCode = { Ok: 0, Failure: 1, Usage: 2 } as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];
