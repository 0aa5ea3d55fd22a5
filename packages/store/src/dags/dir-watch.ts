import { watch, type FSWatcher } from 'node:fs';

/** Quiet time after the last change before the background refresh runs. */
const REFRESH_DEBOUNCE_MS = 25;

/**
 * Watches one folder (not its subfolders) with `fs.watch`: every change calls `onChange` at once
 * (the in-memory view is stale from then on), and `onQuiet` once the folder has been quiet for a
 * moment (time to rebuild the view in the background). The watch never keeps the process alive.
 * A folder that does not exist yet, or a watch that fails (inotify limits), leaves it inactive:
 * callers then read the folder on each request, as without a watch (docs/architecture.md).
 */
export class DirWatch {
  #watcher: FSWatcher | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly dir: string,
    private readonly onChange: () => void,
    private readonly onQuiet: () => void,
  ) {}

  /** True while changes of the folder are reported. */
  get active(): boolean {
    return this.#watcher !== undefined;
  }

  /** Starts watching when not yet watching and the folder exists; true when active. */
  ensure(): boolean {
    if (this.#watcher) return true;
    try {
      const w = watch(this.dir, { persistent: false }, () => this.#changed());
      // The folder removed or the watch broken: stop trusting the view; the next read re-watches.
      w.on('error', () => this.#drop(w));
      this.#watcher = w;
      return true;
    } catch {
      return false;
    }
  }

  close(): void {
    clearTimeout(this.#timer);
    this.#watcher?.close();
    this.#watcher = undefined;
  }

  #changed(): void {
    this.onChange();
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.onQuiet(), REFRESH_DEBOUNCE_MS);
    this.#timer.unref();
  }

  #drop(w: FSWatcher): void {
    w.close();
    if (this.#watcher === w) this.#watcher = undefined;
    this.onChange();
  }
}
