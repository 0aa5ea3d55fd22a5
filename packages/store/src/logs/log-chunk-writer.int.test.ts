import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '@trellis/core';
import { StoreWriteErrors } from '../health/store-write-errors.js';
import { LogChunkWriter } from './log-chunk-writer.js';
import { readTruncation } from './truncation-marker.js';

describe('LogChunkWriter, the coordinator log path of workers (issue 15)', () => {
  let dir: string;
  let logDir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'trellis-chunks-'));
    logDir = join(dir, 'logs');
    mkdirSync(logDir);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', logDir]);
  });
  afterAll(() => {
    execFileSync('umount', ['-l', logDir]); // lazy: also when a failed test left a file open
    rmSync(dir, { recursive: true, force: true });
  });

  it('on a full disk: counts the error, marks the file truncated, acknowledges and drops the chunks, and other files go on', async () => {
    const errors = new StoreWriteErrors(systemClock);
    const warnings: string[] = [];
    const w = new LogChunkWriter(logDir, (m) => warnings.push(m), { writeErrors: errors });
    const big = join(logDir, 'etl', 'run-1', 'a.out');
    const piece = Buffer.alloc(256 * 1024, 'x');
    let offset = 0;
    for (let i = 0; i < 8; i++) {
      // 2 MiB in all, on a 1 MiB disk
      // every chunk is acknowledged (a worker never resends it forever)
      expect(await w.apply(big, offset, piece)).toBe(offset + piece.length);
      offset += piece.length;
    }
    expect(errors.counts().log).toBe(1);
    expect(warnings.join('\n')).toContain(big);
    expect(warnings.join('\n')).toContain('ENOSPC');
    // the marker beside the file exists (empty on a full disk: its reason could not be written)
    expect(await readTruncation(big)).toBeDefined();
    expect(errors.truncation(big)).toContain('ENOSPC');
    await w.close();
    rmSync(big); // room again: another run's log is written whole
    const small = join(logDir, 'etl', 'run-2', 'run.log');
    expect(await w.apply(small, 0, Buffer.from('fine\n'))).toBe(5);
    await w.close();
    expect(readFileSync(small, 'utf8')).toBe('fine\n');
  });

  it("accepts a chunk under a run's own log folder only as the run's stored record names it", async () => {
    const own = join(dir, 'own');
    const w = new LogChunkWriter(logDir, () => undefined, {
      runLogDirOf: (run) =>
        Promise.resolve(run.dagRunId === 'r1' ? join(own, 'etl', 'r1') : undefined),
    });
    const r1 = { name: 'etl', dagRunId: 'r1' };
    const r2 = { name: 'etl', dagRunId: 'r2' };
    expect(await w.accepts(join(own, 'etl/r1/a.out'), r1, r1)).toBe(true);
    expect(await w.accepts(join(own, 'etl/r2/a.out'), r2, r2)).toBe(false);
    expect(await w.accepts(join(own, 'etl/r1/../r2/a.out'), r1, r1)).toBe(false);
    expect(await w.accepts('/etc/passwd', r1, r1)).toBe(false);
    expect(await w.accepts(join(logDir, 'etl/r2/a.out'), r2, r2)).toBe(true);
  });
});
