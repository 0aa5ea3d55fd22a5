/**
 * Runs a short shell command and returns its exit code and stdout: preconditions, repeat
 * conditions and backtick substitution. The real one lives in `@trellis/executors`.
 */
export interface CommandRunner {
  run(
    command: string,
    opts: {
      readonly cwd: string;
      readonly env: Readonly<Record<string, string>>;
      readonly shell: string;
      readonly abort?: AbortSignal;
    },
  ): Promise<{ readonly exitCode: number; readonly stdout: string }>;
}
