import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Clock } from '@trellis/core';
import { isoPlus, makeRecord } from '@trellis/testkit';
import { FsRunStore } from './fs-run-store.js';

// `listRuns({ maxStaleMs })` (the dashboard, the gauges): this store's runs at once, even of a DAG
// new since the runs folder was last read; another instance's (process's) only once the indexes
// are read again, which maxStaleMs 0 always does.
const T0 = '2026-01-02T03:04:05.000Z';
const clock: Clock = { now: () => new Date(T0), sleep: () => Promise.resolve() };
const snapshot = { dag: {}, localDags: [] };
const STALE = 60_000;

let dir: string;
const newStore = (): FsRunStore =>
  new FsRunStore({
    dataDir: join(dir, 'data'),
    logDir: join(dir, 'logs'),
    clock,
    warn: () => undefined,
  });
const create = (store: FsRunStore, dag: string, id: string, s: number) =>
  store.createRun(
    makeRecord({ name: dag, dagRunId: id, createdAt: isoPlus(T0, s * 1000) }),
    snapshot,
  );
const ids = async (store: FsRunStore, maxStaleMs: number) =>
  (await store.listRuns({ maxStaleMs })).map((r) => `${r.name}/${r.dagRunId}`);

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-stale-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('listRuns with maxStaleMs', () => {
  it("shows this store's runs at once and another's once read again", async () => {
    const a = newStore();
    const b = newStore();
    await create(a, 'etl', 'r1', 1);
    expect(await ids(a, STALE)).toEqual(['etl/r1']);
    await create(a, 'etl', 'r2', 2);
    await create(a, 'fresh-dag', 'f1', 3);
    expect(await ids(a, STALE)).toEqual(['fresh-dag/f1', 'etl/r2', 'etl/r1']);
    await create(b, 'etl', 'r3', 4);
    await create(b, 'other-dag', 'o1', 5);
    expect(await ids(a, STALE)).toEqual(['fresh-dag/f1', 'etl/r2', 'etl/r1']);
    expect(await ids(a, 0)).toEqual(['other-dag/o1', 'etl/r3', 'fresh-dag/f1', 'etl/r2', 'etl/r1']);
  });
});
