import { mkdtempSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as fsp from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RunStatus, systemClock } from '@trellis/core';
import { makeRecord } from '@trellis/testkit';
import { FsRunStore } from './fs-run-store.js';
import { RecordCache } from './record-cache.js';

// Every `open` of the store's reads, counted (the cache reads a status file through it).
vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof fsp>();
  return { ...real, open: vi.fn(real.open) };
});

const snapshot = { dag: {}, localDags: [] } as never;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-record-cache-'));
  vi.mocked(fsp.open).mockClear();
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Writes `text` to `path` by rename, as the store does; the inode of the new file. */
const renameIn = (path: string, text: string): bigint => {
  writeFileSync(`${path}.tmp`, text);
  const ino = statSync(`${path}.tmp`, { bigint: true }).ino;
  renameSync(`${path}.tmp`, path);
  return ino;
};

const statusOpens = (): number =>
  vi.mocked(fsp.open).mock.calls.filter(([p]) => String(p).endsWith('status.json')).length;

describe('a record this process renamed into place (issue 21, the worker path)', () => {
  it('is read from the cache while the file is the one renamed, and from disk once replaced', async () => {
    const cache = new RecordCache();
    const path = join(dir, 'status.json');
    const ino = renameIn(path, 'mine');
    cache.remember(path, 'mine', ino);
    expect(await cache.read(path)).toBe('mine');
    expect(statusOpens()).toBe(0);
    // another process's rename: its file is read
    renameIn(path, 'theirs');
    expect(await cache.read(path)).toBe('theirs');
  });

  it('is not kept when another process renamed over it before it was remembered', async () => {
    const cache = new RecordCache();
    const path = join(dir, 'status.json');
    const ino = renameIn(path, 'mine');
    renameIn(path, 'theirs');
    cache.remember(path, 'mine', ino);
    expect(await cache.read(path)).toBe('theirs');
  });

  it('answers the reads of a new run and of its swapped record without reading the file', async () => {
    const store = new FsRunStore({
      dataDir: join(dir, 'data'),
      logDir: join(dir, 'logs'),
      clock: systemClock,
    });
    const r = makeRecord({ status: RunStatus.Queued });
    /** The record read, and whether the file was opened for it. */
    const read = async () => {
      vi.mocked(fsp.open).mockClear();
      return { record: await store.getRun(r), opened: statusOpens() > 0 };
    };
    await store.createRun(r, snapshot);
    expect(await read()).toEqual({ record: r, opened: false });
    const claimed = { ...r, status: RunStatus.Running, revision: 1 };
    expect(await store.saveRunIf(claimed, 0)).toBe(true);
    expect(await read()).toEqual({ record: claimed, opened: false });
    // a large record is not kept (a burst of runs must not fill the cache with large texts)
    const large = { ...claimed, error: 'x'.repeat(20_000), revision: 2 };
    expect(await store.saveRunIf(large, 1)).toBe(true);
    expect(await read()).toEqual({ record: large, opened: true });
  });
});
