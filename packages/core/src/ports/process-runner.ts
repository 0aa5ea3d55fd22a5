/** What to start: a command with arguments, a working directory and a complete environment. */
export interface ProcessSpec {
  command: string;
  args: readonly string[];
  cwd: string;
  env: Readonly<Record<string, string>>;
}

/**
 * A started process. `started` resolves with its pid once it runs (undefined when it could not be
 * started); `exited` never rejects: a failure to spawn resolves with exit code 127.
 */
export interface RunningProcess {
  readonly started: Promise<number | undefined>;
  readonly exited: Promise<{ exitCode: number | null; signal: NodeJS.Signals | null }>;
  /**
   * Sends `signal` to the whole process group (step `signalOnStop`, default SIGTERM); one sent
   * before the process runs is delivered as soon as it does.
   */
  kill(signal: NodeJS.Signals): void;
}

/** Starts processes; the real one lives in `@trellis/executors`, a scripted fake in testkit. */
export interface ProcessRunner {
  start(
    spec: ProcessSpec,
    io: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream },
  ): RunningProcess;
}
