import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunStatus, systemClock } from '@trellis/core';
import { makeRecord } from '@trellis/testkit';
import { FsRunStore } from '../runs/fs-run-store.js';

const snapshot = { dag: {}, localDags: [] } as never;
const MiB = 1024 * 1024;

/** Writes `bytes` into `w` in 64 KiB pieces, honouring backpressure, and ends nothing. */
const pour = async (w: NodeJS.WritableStream, bytes: number): Promise<void> => {
  const piece = Buffer.alloc(64 * 1024, 'x');
  for (let sent = 0; sent < bytes; sent += piece.length)
    if (!w.write(piece)) await new Promise((r) => w.once('drain', r));
};

describe('a log on a full disk (issue 15: nothing lost, nothing silent)', () => {
  let dir: string;
  let logDir: string;
  let store: FsRunStore;
  const warnings: string[] = [];
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'trellis-full-'));
    logDir = join(dir, 'logs');
    mkdirSync(logDir);
    // a private 1 MiB file system for the logs; the records stay on the normal disk
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', logDir]);
    store = new FsRunStore({
      dataDir: join(dir, 'data'),
      logDir,
      clock: systemClock,
      warn: (m) => warnings.push(m),
    });
  });
  afterAll(() => {
    execFileSync('umount', ['-l', logDir]); // lazy: also when a failed test left a file open
    rmSync(dir, { recursive: true, force: true });
  });

  it('rejects the step logs close naming the file and ENOSPC, counts it, and the log endpoints say the log is truncated', async () => {
    const r = makeRecord({ status: RunStatus.Running });
    await store.createRun(r, snapshot);
    const recorder = store.recorderFor(r);
    recorder.log('run started');
    const logs = await recorder.openStepLogs('big');
    await pour(logs.stdout, 2 * MiB); // never stalls although the disk is full
    logs.stderr.write('after the disk filled\n');
    const closed = await logs.close().then(
      () => 'closed without error',
      (e: unknown) => (e as Error).message,
    );
    expect(closed).toContain(logs.stdoutPath);
    expect(closed).toContain('ENOSPC');
    expect(store.writeErrors.counts().log).toBeGreaterThanOrEqual(1);
    expect(store.writeErrors.problem()).toContain('ENOSPC');
    expect(warnings.join('\n')).toContain(logs.stdoutPath);

    const chunk = await store.readLog(logs.stdoutPath, { head: 1 });
    expect(chunk.truncated).toBe(true);
    expect(chunk.truncatedReason).toContain('ENOSPC');
    // another process sharing the store learns it from the marker beside the file
    const other = new FsRunStore({ dataDir: join(dir, 'data'), logDir, clock: systemClock });
    expect((await other.readLog(logs.stdoutPath, { head: 1 })).truncated).toBe(true);
    await recorder.close();
    rmSync(join(logDir, r.name, r.dagRunId), { recursive: true }); // room again
  });

  it('leaves a log whose writes all succeeded untruncated', async () => {
    const r = makeRecord({ dagRunId: 'run-0002', status: RunStatus.Running });
    await store.createRun(r, snapshot);
    const recorder = store.recorderFor(r);
    recorder.log('fine');
    await recorder.close();
    const chunk = await store.readLog(recorder.runLogPath);
    expect(chunk.content).toContain('fine');
    expect(chunk.truncated).toBeUndefined();
  });
});
