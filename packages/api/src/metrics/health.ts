/** What {@link createHealthProbe} checks. */
export interface HealthProbeOptions {
  /** The store's problem, if any (the data directory must be writable); undefined when fine. */
  readonly storeProblem: () => Promise<string | undefined>;
  /** Whether the scheduler answers; absent when this process runs none. */
  readonly schedulerAlive?: () => boolean;
}

/** A probe's verdict: `error` names every failing part; absent means healthy. */
export interface HealthVerdict {
  readonly error?: string;
}

const isAlive = (check: () => boolean): boolean => {
  try {
    return check();
  } catch {
    return false;
  }
};

/**
 * The health probe behind `GET /health` (`HttpDeps.health`; spec: System, Errors "503 unhealthy,
 * scheduler not responding"): asks the store (its data directory must be writable) and the
 * scheduler when one is given. Never throws; both failures are reported together.
 */
export const createHealthProbe =
  (options: HealthProbeOptions): (() => Promise<HealthVerdict>) =>
  async () => {
    const problems: string[] = [];
    const store = await options.storeProblem().catch((e: unknown) => String(e));
    if (store !== undefined) problems.push(store);
    if (options.schedulerAlive && !isAlive(options.schedulerAlive)) {
      problems.push('the scheduler is not responding');
    }
    return problems.length === 0 ? {} : { error: problems.join('; ') };
  };
