import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';

/** A Writable that keeps everything as text; tests await a marker instead of sleeping. */
export class TextSink extends Writable {
  text = '';
  #waiters: { needle: string; resolve: () => void }[] = [];

  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    this.#waiters = this.#waiters.filter((w) => {
      if (!this.text.includes(w.needle)) return true;
      w.resolve();
      return false;
    });
    done();
  }

  /** Resolves once the text contains `needle`. */
  until(needle: string): Promise<void> {
    if (this.text.includes(needle)) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ needle, resolve }));
  }
}

/** Whether `pid` is a live process (a zombie waiting to be reaped counts as dead). */
export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
};
