import { randomUUID } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** Why the data directory is not writable, in words (the errno code, not a stack). */
const describeFsError = (e: unknown): string => {
  const err = e as NodeJS.ErrnoException;
  return typeof err.code === 'string' ? `${err.code}: ${err.message}` : String(e);
};

/**
 * The store's part of `GET /health`: writes and removes a small file in `dataDir`. Undefined when
 * that works, else the problem naming the directory. Never throws; leaves no file behind.
 */
export const dataDirProblem = async (dataDir: string): Promise<string | undefined> => {
  const probe = path.join(dataDir, `.health-${process.pid}-${randomUUID()}`);
  let problem: string | undefined;
  try {
    await writeFile(probe, 'ok', { flag: 'wx' });
  } catch (e) {
    problem = `data directory ${dataDir} is not writable (${describeFsError(e)})`;
  }
  // `force` also covers the failed write; removal problems are not a health problem.
  await rm(probe, { force: true }).catch(() => undefined);
  return problem;
};
