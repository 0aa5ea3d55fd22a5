import {
  existsSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunStatus, type Clock } from '@trellis/core';
import type { DagRunRecord } from '@trellis/spec';
import { isoPlus, makeChildRecord, makeRecord } from '@trellis/testkit';
import { FsRunStore } from './fs-run-store.js';

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;
const T0 = '2026-01-01T00:00:00.000Z';

/** A clock that only moves when told to. */
class FakeClock implements Clock {
  #ms: number;
  constructor(iso: string) {
    this.#ms = Date.parse(iso);
  }
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

const snapshot = { dag: {}, localDags: [] };
let dir: string;
let clock: FakeClock;
const newStore = (): FsRunStore =>
  new FsRunStore({ dataDir: join(dir, 'data'), logDir: join(dir, 'logs'), clock });

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-retention-'));
  clock = new FakeClock(T0);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A run of `etl` created `day` days after T0 that ended an hour later with `status`. */
const runOnDay = (id: string, day: number, status: RunStatus): DagRunRecord => {
  const createdAt = isoPlus(T0, day * DAY);
  const ended =
    status !== RunStatus.Running && status !== RunStatus.Queued && status !== RunStatus.NotStarted;
  return makeRecord({
    dagRunId: id,
    createdAt,
    status,
    startedAt: status === RunStatus.NotStarted ? '' : createdAt,
    finishedAt: ended ? isoPlus(createdAt, 3_600_000) : '',
  });
};

const withLogs = async (store: FsRunStore, rec: DagRunRecord): Promise<void> => {
  const recorder = store.recorderFor(rec);
  recorder.log('hello');
  const step = await recorder.openStepLogs('step 1');
  step.stdout.write('out\n');
  await step.close();
  await recorder.close();
};

describe('retention', () => {
  it('deletes finished runs older than the retention with their logs and children, and keeps the rest', async () => {
    const store = newStore();
    const old = runOnDay('old', 0, RunStatus.Succeeded);
    await store.createRun(old, snapshot);
    await withLogs(store, old);
    const child = makeChildRecord(old, { status: RunStatus.Succeeded });
    await store.createRun(child, snapshot);
    await withLogs(store, child);
    const grandchild = makeChildRecord(old, {
      name: 'grandchild',
      dagRunId: 'gc-1',
      parent: { name: 'child', dagRunId: 'child-0001' },
      status: RunStatus.Failed,
    });
    await store.createRun(grandchild, snapshot);
    await withLogs(store, grandchild);
    for (const [id, day, status] of [
      ['failed', 1, RunStatus.Failed],
      ['cancelled', 1, RunStatus.Cancelled],
      ['partial', 1, RunStatus.PartiallySucceeded],
      ['never', 1, RunStatus.NotStarted],
      ['running', 0, RunStatus.Running],
      ['queued', 0, RunStatus.Queued],
      ['recent', 9, RunStatus.Succeeded],
    ] as const)
      await store.createRun(runOnDay(id, day, status), snapshot);

    clock.advanceBy(10 * DAY); // now = day 10: runs that ended before day 3 are older than 7 days
    expect(await store.deleteRunsOlderThan('etl', 7)).toBe(5);

    expect((await store.listRuns({ includeChildren: true })).map((r) => r.dagRunId).sort()).toEqual(
      ['queued', 'recent', 'running'],
    );
    expect(readdirSync(join(dir, 'data/runs/etl')).sort()).toEqual([
      '.changes',
      'index.jsonl',
      'queued',
      'recent',
      'running',
    ]);
    for (const gone of ['logs/etl/old', 'logs/child/child-0001', 'logs/grandchild/gc-1'])
      expect(existsSync(join(dir, gone))).toBe(false);
    // What the index says agrees with a fresh instance's view.
    expect((await newStore().listRuns()).map((r) => r.dagRunId).sort()).toEqual([
      'queued',
      'recent',
      'running',
    ]);
  });

  it('keeps a finished run while one of its children still runs', async () => {
    const store = newStore();
    const root = runOnDay('root', 0, RunStatus.Failed);
    await store.createRun(root, snapshot);
    await store.createRun(makeChildRecord(root, { status: RunStatus.Running }), snapshot);
    clock.advanceBy(30 * DAY);
    expect(await store.deleteRunsOlderThan('etl', 7)).toBe(0);
    expect((await store.getRun(root)).dagRunId).toBe('root');
  });

  it('trusts the record over a stale index line: a run that is running again is kept', async () => {
    const store = newStore();
    const rec = runOnDay('r', 0, RunStatus.Failed);
    await store.createRun(rec, snapshot);
    // A crash between writing status.json and appending to the index left the index behind.
    const running = { ...rec, status: RunStatus.Running, finishedAt: '', revision: 1 };
    writeFileSync(join(dir, 'data/runs/etl/r/status.json'), JSON.stringify(running));
    clock.advanceBy(30 * DAY);
    expect(await newStore().deleteRunsOlderThan('etl', 7)).toBe(0);
    expect((await store.getRun(rec)).status).toBe(RunStatus.Running);
  });

  it('finishes a deletion that a crash interrupted after the folder was moved to the trash', async () => {
    const store = newStore();
    const rec = runOnDay('r', 0, RunStatus.Succeeded);
    await store.createRun(rec, snapshot);
    await withLogs(store, rec);
    // The crash: the folder was renamed, nothing else happened.
    renameSync(join(dir, 'data/runs/etl/r'), join(dir, 'data/runs/etl/.trash-r-0123abcd'));
    expect(await newStore().deleteRunsOlderThan('etl', 7)).toBe(0);
    expect(readdirSync(join(dir, 'data/runs/etl')).sort()).toEqual(['.changes', 'index.jsonl']);
    expect(existsSync(join(dir, 'logs/etl/r'))).toBe(false);
    expect(await newStore().listRuns()).toEqual([]);
  });

  it('removes what a crash during a change file compaction left, once its process is gone', async () => {
    await newStore().createRun(runOnDay('r', 0, RunStatus.Running), snapshot);
    const etl = join(dir, 'data/runs/etl');
    const leftovers = (): string[] => readdirSync(etl).filter((n) => n.startsWith('.changes.'));
    const gone = 4_194_305; // above the largest pid_max (2^22): no such process
    const running = process.ppid; // a process that runs: it might be compacting right now
    // written at T0 on the store's clock, whatever the real date
    for (const pid of [gone, running]) {
      const file = join(etl, `.changes.${pid}.tmp`);
      writeFileSync(file, '');
      utimesSync(file, new Date(T0), new Date(T0));
    }
    expect(await newStore().deleteRunsOlderThan('etl', 7)).toBe(0);
    expect(leftovers()).toEqual([`.changes.${running}.tmp`]);
    // a compaction takes microseconds: a file this old is a leftover whatever its pid
    clock.advanceBy(2 * HOUR);
    expect(await newStore().deleteRunsOlderThan('etl', 7)).toBe(0);
    expect(leftovers()).toEqual([]);
  });

  it('counts zero for a DAG without runs', async () => {
    expect(await newStore().deleteRunsOlderThan('nothing', 1)).toBe(0);
  });
});
