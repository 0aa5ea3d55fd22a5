import { randomUUID } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** What {@link createHealthProbe} checks. */
export interface HealthProbeOptions {
  /** The store's data directory, which must be writable (`config.paths.dataDir`). */
  readonly dataDir: string;
  /** Whether the scheduler answers; absent when this process runs none. */
  readonly schedulerAlive?: () => boolean;
}

/** A probe's verdict: `error` names every failing part; absent means healthy. */
export interface HealthVerdict {
  readonly error?: string;
}

/** Why the data directory is not writable, in words (the errno code, not a stack). */
const describeFsError = (e: unknown): string => {
  const err = e as NodeJS.ErrnoException;
  return typeof err.code === 'string' ? `${err.code}: ${err.message}` : String(e);
};

const isAlive = (check: () => boolean): boolean => {
  try {
    return check();
  } catch {
    return false;
  }
};

/**
 * The health probe behind `GET /health` (`HttpDeps.health`; spec: System, Errors "503 unhealthy,
 * scheduler not responding"): writes and removes a small file in `dataDir`, and asks the
 * scheduler when one is given. Never throws; both failures are reported together.
 */
export const createHealthProbe =
  (options: HealthProbeOptions): (() => Promise<HealthVerdict>) =>
  async () => {
    const problems: string[] = [];
    const probe = path.join(options.dataDir, `.health-${process.pid}-${randomUUID()}`);
    try {
      await writeFile(probe, 'ok', { flag: 'wx' });
    } catch (e) {
      problems.push(`data directory ${options.dataDir} is not writable (${describeFsError(e)})`);
    }
    // `force` also covers the failed write; removal problems are not a health problem.
    await rm(probe, { force: true }).catch(() => undefined);
    if (options.schedulerAlive && !isAlive(options.schedulerAlive)) {
      problems.push('the scheduler is not responding');
    }
    return problems.length === 0 ? {} : { error: problems.join('; ') };
  };
