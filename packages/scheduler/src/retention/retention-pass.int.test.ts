import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunStatus } from '@trellis/core';
import { DagFileLoader, FsRunStore } from '@trellis/store';
import { FakeClock, makeRecord } from '@trellis/testkit';
import { applyRetentionToAll } from './retention-pass.js';

const DAY = 24 * 60 * 60 * 1000;
let home: string;
let clock: FakeClock;
let store: FsRunStore;

const addRun = async (name: string, id: string, snapshotDag: object): Promise<void> => {
  const now = clock.now().toISOString();
  await store.createRun(
    makeRecord({
      name,
      dagRunId: id,
      status: RunStatus.Succeeded,
      createdAt: now,
      startedAt: now,
      finishedAt: now,
    }),
    { dag: snapshotDag, localDags: [] },
  );
};

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'trellis-retention-pass-'));
  mkdirSync(join(home, 'dags'));
  clock = new FakeClock('2026-01-01T00:00:00.000Z');
  store = new FsRunStore({ dataDir: join(home, 'data'), logDir: join(home, 'logs'), clock });
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

describe('the daily retention pass', () => {
  it("keeps each DAG's runs for its own histRetentionDays (file, else latest snapshot, else 30)", async () => {
    writeFileSync(join(home, 'dags', 'short.yaml'), 'histRetentionDays: 5\nsteps:\n  - echo hi\n');
    await addRun('short', 's1', { name: 'short', histRetentionDays: 90 }); // the file wins
    await addRun('gone', 'g1', { name: 'gone', histRetentionDays: 3 }); // no file: the snapshot
    await addRun('old', 'o1', { name: 'old' }); // neither: defaultDays (30)
    await clock.advanceBy(6 * DAY);
    const dags = new DagFileLoader(join(home, 'dags'));
    expect(await applyRetentionToAll({ store, dags })).toEqual({
      deletedRuns: { gone: 1, short: 1 },
      totalRuns: 2,
      orphanedLogFolders: 0,
    });
    expect((await store.listRuns()).map((r) => r.name)).toEqual(['old']);
    expect((await applyRetentionToAll({ store, dags, defaultDays: 7 })).deletedRuns).toEqual({});
    await clock.advanceBy(2 * DAY);
    expect((await applyRetentionToAll({ store, dags, defaultDays: 7 })).deletedRuns).toEqual({
      old: 1,
    });
  });
});
