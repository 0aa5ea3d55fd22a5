import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { link, mkdir, readFile, rename, rmdir, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Clock } from '@trellis/core';
import type { RunOwner } from '@trellis/spec';
import { isOwnerAlive } from '../owner/process-owner.js';

/** What a lease file holds. */
export interface LeaseHolder {
  readonly owner: RunOwner;
  /** Unique per acquisition, so a process tells its own lease from an older one of its pid. */
  readonly token: string;
  /** ISO 8601: the holder's last renewal. */
  readonly renewedAt: string;
}

export interface LeaseLockOptions {
  readonly path: string;
  readonly owner: RunOwner;
  readonly clock: Clock;
  /** A holder on another host that has not renewed for this long is taken over. @default 30 s */
  readonly staleMs?: number;
}

/**
 * A lease in a file, so only one process acts as the scheduler of a store (issue #5: a lock that
 * a dead holder cannot keep). Created atomically (hard link of a complete temp file); taken over
 * when its holder is gone: a process on this host that no longer runs, or a holder elsewhere that
 * stopped renewing for `staleMs`. A holder that finds the lease taken on renewal steps down.
 */
export class LeaseLock {
  readonly #token = randomUUID();
  readonly #staleMs: number;

  constructor(private readonly opts: LeaseLockOptions) {
    this.#staleMs = opts.staleMs ?? 30_000;
  }

  /** True when this process holds the lease now (acquired, or taken over from a dead holder). */
  async tryAcquire(): Promise<boolean> {
    await mkdir(dirname(this.opts.path), { recursive: true });
    const temp = await this.#writeTemp();
    try {
      await link(temp, this.opts.path);
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    } finally {
      await unlink(temp).catch(() => undefined);
    }
    const holder = await this.holder();
    if (holder?.token === this.#token) return true;
    if (holder !== undefined && this.#alive(holder)) return false;
    return this.#takeOver(holder);
  }

  /**
   * Replaces a dead holder's lease. Contenders first create a takeover marker exclusively (a
   * directory: mkdir is atomic), so exactly one of them replaces the lease; the winner checks
   * that the lease is still the dead one it judged. A marker left by a contender that crashed
   * midway is removed once stale.
   */
  async #takeOver(dead: LeaseHolder | undefined): Promise<boolean> {
    const marker = `${this.opts.path}.takeover`;
    try {
      await mkdir(marker);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const st = await stat(marker).catch(() => undefined);
      if (st && this.opts.clock.now().getTime() - st.mtimeMs > this.#staleMs)
        await rmdir(marker).catch(() => undefined);
      return false; // another contender is taking over; look again later
    }
    try {
      if ((await this.holder())?.token !== dead?.token) return false; // someone was faster
      await rename(await this.#writeTemp(), this.opts.path);
      return true;
    } finally {
      await rmdir(marker).catch(() => undefined);
    }
  }

  /** Renews the lease; false when another process holds it now (this one must step down). */
  async renew(): Promise<boolean> {
    const holder = await this.holder();
    if (holder?.token !== this.#token) return false;
    await rename(await this.#writeTemp(), this.opts.path);
    return true;
  }

  /** Gives the lease up if this process holds it. */
  async release(): Promise<void> {
    if ((await this.holder())?.token === this.#token)
      await unlink(this.opts.path).catch(() => undefined);
  }

  /** The current holder, or undefined when there is none (or the file is unreadable). */
  async holder(): Promise<LeaseHolder | undefined> {
    try {
      return JSON.parse(await readFile(this.opts.path, 'utf8')) as LeaseHolder;
    } catch {
      return undefined;
    }
  }

  #alive(h: LeaseHolder): boolean {
    if (h.owner.host === hostname()) return isOwnerAlive(h.owner);
    return this.opts.clock.now().getTime() - Date.parse(h.renewedAt) < this.#staleMs;
  }

  async #writeTemp(): Promise<string> {
    const temp = `${this.opts.path}.${process.pid}.${randomUUID()}.tmp`;
    const body: LeaseHolder = {
      owner: this.opts.owner,
      token: this.#token,
      renewedAt: this.opts.clock.now().toISOString(),
    };
    await writeFile(temp, JSON.stringify(body));
    return temp;
  }
}
