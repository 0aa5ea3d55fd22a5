import { existsSync, watch, type FSWatcher } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { STOP_FILE } from '../layout/store-layout.js';

/** How often `watchStopFile` looks for the file when file events are missed, in ms. */
export const STOP_POLL_INTERVAL_MS = 1000;

/**
 * Marks a run as asked to stop by writing `stop-requested` (the request time, ISO) into its
 * directory. Errors: the file system's (`ENOENT` when the run directory does not exist).
 */
export const writeStopRequest = (runDir: string, at: Date): Promise<void> =>
  writeFile(join(runDir, STOP_FILE), `${at.toISOString()}\n`);

/** True when a stop was requested for the run in `runDir`. */
export const hasStopRequest = (runDir: string): boolean => existsSync(join(runDir, STOP_FILE));

/**
 * Calls `onStop` once when `stop-requested` appears in `runDir` (or at once, on a later tick, when
 * it is already there). Watches the directory with `fs.watch` and also polls every second, since
 * file events are not delivered on every file system (network mounts) and a watcher can fail.
 * The poll uses a real timer: this is an adapter, and the timer does not keep the process alive.
 * Returns a disposer; calling it stops watching, and `onStop` is not called afterwards.
 */
export const watchStopFile = (runDir: string, onStop: () => void): (() => void) => {
  let done = false;
  let watcher: FSWatcher | undefined;
  const dispose = (): void => {
    done = true;
    watcher?.close();
    watcher = undefined;
    clearInterval(timer);
  };
  const check = (): void => {
    if (done || !hasStopRequest(runDir)) return;
    dispose();
    onStop();
  };
  const timer = setInterval(check, STOP_POLL_INTERVAL_MS);
  timer.unref();
  try {
    watcher = watch(runDir, { persistent: false }, (_event, file) => {
      if (file === null || file === STOP_FILE) check();
    });
    watcher.on('error', () => {
      watcher?.close(); // the poll carries on alone
      watcher = undefined;
    });
  } catch {
    // The directory may not exist yet or cannot be watched: polling alone still works.
  }
  setImmediate(check);
  return dispose;
};
