import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunStatus, type Clock } from '@trellis/core';
import type { DagRunRecord } from '@trellis/spec';
import { makeChildRecord, makeRecord } from '@trellis/testkit';
import { FsRunStore } from './fs-run-store.js';

const DAY = 24 * 60 * 60 * 1000;

/** A clock that only moves when told to; it starts at the real time so file mtimes compare. */
class FakeClock implements Clock {
  #ms = Math.floor(Date.now() / 1000) * 1000;
  now(): Date {
    return new Date(this.#ms);
  }
  sleep(): Promise<void> {
    return Promise.resolve();
  }
  advanceBy(ms: number): void {
    this.#ms += ms;
  }
}

let dir: string;
let clock: FakeClock;
let store: FsRunStore;
const logs = (): string => join(dir, 'logs');

/** Creates a run with a run log and a step log, as a finished run leaves them. */
const addRun = async (over: Partial<DagRunRecord>, root?: DagRunRecord): Promise<DagRunRecord> => {
  const now = clock.now().toISOString();
  const base = { status: RunStatus.Succeeded, createdAt: now, startedAt: now, finishedAt: now };
  const r = root ? makeChildRecord(root, { ...base, ...over }) : makeRecord({ ...base, ...over });
  r.log = store.runLogPath(r);
  await store.createRun(r, { dag: { name: r.name }, localDags: [] });
  writeFileSync(r.log, 'run log\n');
  writeFileSync(store.stepLogPaths(r, 'step 1').stdoutPath, 'out\n');
  return r;
};

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-cleanup-'));
  clock = new FakeClock();
  store = new FsRunStore({ dataDir: join(dir, 'data'), logDir: logs(), clock });
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('store-wide clean-up (cleanupAll) on a fake clock', () => {
  it('deletes runs that ended more than N days ago with their child runs and logs, across DAGs', async () => {
    const a1 = await addRun({ name: 'a', dagRunId: 'a1' });
    const child = await addRun({ dagRunId: 'c1' }, a1);
    const b1 = await addRun({ name: 'b', dagRunId: 'b1', status: RunStatus.Failed });
    const running = await addRun({
      name: 'b',
      dagRunId: 'b2',
      status: RunStatus.Running,
      finishedAt: '',
    });

    clock.advanceBy(29 * DAY);
    expect(await store.cleanupAll(30)).toEqual({
      deletedRuns: {},
      totalRuns: 0,
      orphanedLogFolders: 0,
    });

    clock.advanceBy(2 * DAY);
    const report = await store.cleanupAll(30);
    expect(report).toEqual({ deletedRuns: { a: 1, b: 1 }, totalRuns: 2, orphanedLogFolders: 0 });
    for (const gone of [a1, child, b1]) expect(existsSync(dirname(gone.log))).toBe(false);
    expect((await store.listRuns({ includeChildren: true })).map((r) => r.dagRunId)).toEqual([
      'b2',
    ]);
    expect(existsSync(running.log)).toBe(true);
  });

  it("applies each DAG's own retention when given a function", async () => {
    await addRun({ name: 'a', dagRunId: 'a1' });
    await addRun({ name: 'b', dagRunId: 'b1' });
    clock.advanceBy(40 * DAY);
    const report = await store.cleanupAll((dag) => (dag === 'a' ? 60 : 30));
    expect(report.deletedRuns).toEqual({ b: 1 });
    expect((await store.listRuns()).map((r) => r.dagRunId)).toEqual(['a1']);
  });

  it('removes old run log folders whose run is gone, and leaves other folders alone', async () => {
    const kept = await addRun({ name: 'a', dagRunId: 'a1' });
    const orphan = join(logs(), 'gone', 'r9');
    mkdirSync(orphan, { recursive: true });
    writeFileSync(join(orphan, 'run.log'), 'left behind\n');
    const notARun = join(logs(), 'admin', 'x');
    mkdirSync(notARun, { recursive: true });
    writeFileSync(join(notARun, 'notes.txt'), 'not a run log\n');

    clock.advanceBy(5 * DAY);
    expect((await store.cleanupAll(30)).orphanedLogFolders).toBe(0); // not old enough yet
    clock.advanceBy(30 * DAY);
    const report = await store.cleanupAll((dag) => (dag === 'a' ? 100 : 30));
    expect(report).toEqual({ deletedRuns: {}, totalRuns: 0, orphanedLogFolders: 1 });
    expect(existsSync(orphan)).toBe(false);
    expect(existsSync(notARun)).toBe(true);
    expect(existsSync(kept.log)).toBe(true);
  });

  it('refuses a negative number of days, naming the value', async () => {
    await addRun({ name: 'a', dagRunId: 'a1' });
    await expect(store.cleanupAll(-1)).rejects.toThrow(
      'invalid retention -1: use a number of days of 0 or more',
    );
  });
});
