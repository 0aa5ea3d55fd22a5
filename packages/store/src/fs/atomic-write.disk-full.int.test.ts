import { execFileSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunStatus, systemClock } from '@trellis/core';
import { makeRecord } from '@trellis/testkit';
import { FsRunStore } from '../runs/fs-run-store.js';
import { writeFileAtomic } from './atomic-write.js';
import { remainderAfter } from './fd.js';

const KiB = 1024;

/** Fills the file system of `dir` to the last byte, then frees `room` bytes. */
const fillLeaving = (dir: string, room: number): void => {
  const filler = join(dir, 'filler');
  try {
    writeFileSync(filler, Buffer.alloc(1024 * KiB, 1));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
  }
  truncateSync(filler, statSync(filler).size - room);
};

describe('a record written in parts on a full disk (a short writev)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'trellis-short-'));
    mkdirSync(join(dir, 'fs'));
    dir = join(dir, 'fs');
    // a private 256 KiB file system, so the disk fills part way through the parts
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', dir]);
  });
  afterAll(() => {
    execFileSync('umount', ['-l', dir]);
    rmSync(join(dir, '..'), { recursive: true, force: true });
  });

  it('rejects with ENOSPC and leaves the previous file whole (no temporary file left)', async () => {
    const path = join(dir, 'status.json');
    await writeFileAtomic(path, '{"revision":1}');
    fillLeaving(dir, 8 * KiB);
    const parts = Array.from({ length: 10 }, (_, i) => Buffer.alloc(4 * KiB, 97 + i));
    const result = await writeFileAtomic(path, parts).then(
      () => 'written',
      (e: unknown) => (e as NodeJS.ErrnoException).code,
    );
    expect(result).toBe('ENOSPC');
    expect(readFileSync(path, 'utf8')).toBe('{"revision":1}');
    expect(readdirSync(dir).sort()).toEqual(['filler', 'status.json']);
  });

  it('a run save that meets the full disk rejects and the run keeps its last record', async () => {
    rmSync(join(dir, 'filler'), { force: true });
    const store = new FsRunStore({
      dataDir: join(dir, 'data'),
      logDir: join(dir, 'logs'),
      clock: systemClock,
    });
    const r = makeRecord({ status: RunStatus.Running, revision: 1 });
    await store.createRun(r, { dag: {}, localDags: [] });
    fillLeaving(dir, 8 * KiB);
    const big = { ...r, revision: 2, error: 'x'.repeat(40 * KiB) };
    const result = await store.saveRun(big).then(
      () => 'saved',
      (e: unknown) => (e as NodeJS.ErrnoException).code,
    );
    expect(result).toBe('ENOSPC');
    const kept = await store.getRun({ name: r.name, dagRunId: r.dagRunId });
    expect([kept.revision, kept.error]).toEqual([1, r.error]);
  });
});

describe('remainderAfter', () => {
  const parts = [Buffer.from('abc'), Buffer.from('de'), Buffer.from('fgh')];
  it('gives the bytes past a short write, across part boundaries', () => {
    expect(remainderAfter(parts, 0)?.toString()).toBe('abcdefgh');
    expect(remainderAfter(parts, 4)?.toString()).toBe('efgh');
    expect(remainderAfter(parts, 5)?.toString()).toBe('fgh');
    expect(remainderAfter(parts, 8)).toBeUndefined();
  });
});
