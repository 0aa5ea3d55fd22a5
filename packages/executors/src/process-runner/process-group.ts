import { existsSync } from 'node:fs';
import type { ProcessSpec } from '@trellis/core';

/** Signals the whole process group led by `pid`; a group that is already gone is not an error. */
export const killGroup = (pid: number | undefined, signal: NodeJS.Signals): void => {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
  }
};

/** The line a step's stderr gets when its process could not be started, naming the cause. */
export const startFailureMessage = (
  spec: ProcessSpec,
  err: { readonly code?: string | undefined; readonly message: string },
): string => {
  const why =
    err.code === 'ENOENT' && !existsSync(spec.cwd)
      ? `working directory ${spec.cwd} does not exist`
      : err.code === 'ENOENT'
        ? 'no such file or interpreter (ENOENT)'
        : err.code === 'EACCES'
          ? 'permission denied: is it executable? (EACCES)'
          : err.message;
  return `trellis: cannot start ${spec.command}: ${why}\n`;
};
