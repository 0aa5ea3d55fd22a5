import { join } from 'node:path';
import { systemClock } from '@trellis/core';
import type { DagRunRecord } from '@trellis/spec';
import { FsRunStore } from '../../src/runs/fs-run-store.js';

/** A file store of runs opened by a test, with the warnings it gave. */
export interface OpenedRunStore {
  readonly store: FsRunStore;
  readonly warnings: string[];
}

/**
 * Opens a file store of runs on `<dir>/data` (logs under `<dir>/logs`) with the system clock,
 * collecting its warnings, and telling `onRecordSaved` of each record written when given. Each
 * call is another store on the same folder, as another process would open it. Test support
 * only: not exported from the package entry.
 */
export const openRunStore = (
  dir: string,
  onRecordSaved?: (record: DagRunRecord) => void,
): OpenedRunStore => {
  const warnings: string[] = [];
  const store = new FsRunStore({
    dataDir: join(dir, 'data'),
    logDir: join(dir, 'logs'),
    clock: systemClock,
    warn: (m) => warnings.push(m),
    ...(onRecordSaved ? { onRecordSaved } : {}),
  });
  return { store, warnings };
};
