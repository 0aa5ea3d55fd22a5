import { createHash } from 'node:crypto';
import { mkdir, readFile, readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '@trellis/core';
import type { IdempotencyEntry, IdempotencyJournal } from '@trellis/services';
import { writeFileAtomic } from '../fs/atomic-write.js';
import { isMissing } from '../fs/fs-errors.js';

/** Options of {@link FsIdempotencyJournal}. */
export interface FsIdempotencyJournalOptions {
  /** The folder of the entries: `<dataDir>/idempotency`. */
  readonly dir: string;
  readonly clock: Clock;
  /** Age at which an entry is swept. @default 24 h */
  readonly ttlMs?: number;
  /** At most this many entries; past it the oldest go first. @default 50,000 */
  readonly maxEntries?: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** How often a put also sweeps expired entries. */
const SWEEP_EVERY_MS = 60 * 60 * 1000;

/**
 * Idempotency keys on disk (docs/decisions.md, "Idempotent triggers"): one small JSON file per
 * key, named by the SHA-256 of the key (any printable key, fixed-length names), written
 * atomically, so an entry survives a restart and a crash leaves the old or the new file. Expired
 * entries are swept at most once an hour on a put, and when the bound is reached; then, if still
 * full, the oldest entries are removed (the bound wins over the 24 h window).
 */
export class FsIdempotencyJournal implements IdempotencyJournal {
  #count: number | undefined;
  #lastSweepMs = -Infinity;

  constructor(private readonly opts: FsIdempotencyJournalOptions) {}

  #path(key: string): string {
    return join(this.opts.dir, `${createHash('sha256').update(key).digest('hex')}.json`);
  }

  async get(key: string): Promise<IdempotencyEntry | undefined> {
    const text = await readFile(this.#path(key), 'utf8').catch((e: unknown) => {
      if (isMissing(e)) return undefined;
      throw e;
    });
    if (text === undefined) return undefined;
    const entry = JSON.parse(text) as IdempotencyEntry;
    return entry.key === key ? entry : undefined; // a hash collision is a different key
  }

  async put(entry: IdempotencyEntry): Promise<void> {
    await mkdir(this.opts.dir, { recursive: true });
    this.#count ??= (await this.#files()).length;
    const now = this.opts.clock.now().getTime();
    const max = this.opts.maxEntries ?? 50_000;
    if (this.#count >= max || now - this.#lastSweepMs >= SWEEP_EVERY_MS)
      await this.#sweep(now, max);
    await writeFileAtomic(this.#path(entry.key), JSON.stringify(entry));
    this.#count++;
  }

  async remove(key: string): Promise<void> {
    await unlink(this.#path(key)).then(
      () => {
        if (this.#count !== undefined) this.#count--;
      },
      (e: unknown) => {
        if (!isMissing(e)) throw e;
      },
    );
  }

  async #files(): Promise<string[]> {
    const names = await readdir(this.opts.dir).catch((e: unknown) => {
      if (isMissing(e)) return [];
      throw e;
    });
    return names.filter((n) => n.endsWith('.json') && !n.startsWith('.'));
  }

  /** Removes expired entries, then the oldest until one more fits under `max`. */
  async #sweep(now: number, max: number): Promise<void> {
    this.#lastSweepMs = now;
    const ttl = this.opts.ttlMs ?? DAY_MS;
    const entries: { file: string; at: number }[] = [];
    for (const file of await this.#files()) {
      const path = join(this.opts.dir, file);
      const text = await readFile(path, 'utf8').catch(() => undefined);
      const at = text === undefined ? undefined : createdAt(text);
      if (at === undefined || now - at >= ttl) await unlink(path).catch(() => undefined);
      else entries.push({ file, at });
    }
    entries.sort((a, b) => a.at - b.at);
    while (entries.length >= max) {
      const oldest = entries.shift();
      if (oldest) await unlink(join(this.opts.dir, oldest.file)).catch(() => undefined);
    }
    this.#count = entries.length;
  }
}

/** An entry's `createdAtMs`, or undefined for a file that is not an entry. */
const createdAt = (text: string): number | undefined => {
  try {
    const v = (JSON.parse(text) as { createdAtMs?: unknown }).createdAtMs;
    return typeof v === 'number' ? v : undefined;
  } catch {
    return undefined;
  }
};
