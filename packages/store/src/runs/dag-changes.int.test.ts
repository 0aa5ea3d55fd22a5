import { mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunStatus } from '@trellis/core';
import type { DagRunRecord } from '@trellis/spec';
import { makeRecord } from '@trellis/testkit';
import { openRunStore, type OpenedRunStore } from '../../test/support/run-store-fixture.js';
import { CHANGES_COMPACT_BYTES } from './dag-changes.js';
import type { FsRunStore } from './fs-run-store.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-changes-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const openWith = (onRecordSaved?: (r: DagRunRecord) => void): OpenedRunStore =>
  openRunStore(dir, onRecordSaved);
const open = (): FsRunStore => openWith().store;
const snapshot = { dag: { name: 'etl', steps: [] }, localDags: [] };
const changesPath = (): string => join(dir, 'data/runs/etl/.changes');

describe('change stamp of a DAG in the file store', () => {
  it('is undefined for a DAG without runs, and made for runs stored before it existed', async () => {
    const store = open();
    expect(await store.changeStamp('etl')).toBeUndefined();
    const rec = makeRecord({ status: RunStatus.Succeeded });
    await store.createRun(rec, snapshot);
    // runs written by an earlier version (or seeded by hand): no change file yet
    rmSync(join(dir, 'data/runs/etl/.changes'));
    const first = await open().changeStamp('etl');
    expect(first).toBeDefined();
    expect(await store.changeStamp('etl')).toBe(first);
    await store.saveRun({ ...rec, revision: 1, error: 'changed' });
    expect(await open().changeStamp('etl')).not.toBe(first);
  });

  it('has changed by the time onRecordSaved tells of a save or a swap', async () => {
    // the stamp as another process takes it, at the moment a waiter is told of the save
    const seen: Promise<string | undefined>[] = [];
    const reader = open();
    const { store } = openWith((r) => {
      if (r.status !== RunStatus.Running) seen.push(reader.changeStamp('etl'));
    });
    const rec = makeRecord({ status: RunStatus.Running });
    await store.createRun(rec, snapshot);
    const beforeSave = await reader.changeStamp('etl');
    await store.saveRun({ ...rec, revision: 1, status: RunStatus.Succeeded });
    const beforeSwap = await reader.changeStamp('etl');
    expect(await store.saveRunIf({ ...rec, revision: 2, status: RunStatus.Failed }, 1)).toBe(true);
    const [atSave, atSwap] = await Promise.all(seen);
    expect(atSave).toBeDefined();
    expect(atSave).not.toBe(beforeSave);
    expect(atSwap).toBeDefined();
    expect(atSwap).not.toBe(beforeSwap);
  });

  it('is undefined, and answers no error, when the change file cannot be read or made', async () => {
    const { store, warnings } = openWith();
    await store.createRun(makeRecord({ status: RunStatus.Succeeded }), snapshot);
    rmSync(changesPath());
    symlinkSync('.changes', changesPath()); // a loop: ELOOP, also for root
    await expect(store.changeStamp('etl')).resolves.toBeUndefined();
    rmSync(changesPath());
    mkdirSync(changesPath()); // not a file: its stat never changes with a write
    await expect(store.changeStamp('etl')).resolves.toBeUndefined();
    expect(warnings.length).toBeGreaterThan(0);
  });

  it('never fails a write whose note cannot be written', async () => {
    const { store, warnings } = openWith();
    const rec = makeRecord({ status: RunStatus.Running });
    await store.createRun(rec, snapshot);
    rmSync(changesPath());
    mkdirSync(changesPath()); // an append fails with EISDIR, also for root
    await store.saveRun({ ...rec, revision: 1, status: RunStatus.Succeeded });
    expect(await store.saveRunIf({ ...rec, revision: 2, status: RunStatus.Failed }, 1)).toBe(true);
    const other = makeRecord({ dagRunId: 'run-0002', status: RunStatus.Succeeded });
    await store.createRun(other, snapshot);
    await store.deleteRun(other);
    expect((await store.getRun(rec)).status).toBe(RunStatus.Failed);
    expect(warnings.some((w) => w.includes('could not note'))).toBe(true);
  });

  it('is emptied by retention past its bound, under a stamp never taken before', async () => {
    const store = open();
    await store.createRun(makeRecord({ status: RunStatus.Succeeded }), snapshot);
    writeFileSync(changesPath(), '+'.repeat(CHANGES_COMPACT_BYTES + 1));
    const before = await store.changeStamp('etl');
    await store.deleteRunsOlderThan('etl', 30);
    expect(statSync(changesPath()).size).toBe(0);
    const after = await store.changeStamp('etl');
    expect(after).toBeDefined();
    expect(after).not.toBe(before);
    // under the bound it is left as it is
    writeFileSync(changesPath(), '++');
    await store.deleteRunsOlderThan('etl', 30);
    expect(statSync(changesPath()).size).toBe(2);
  });
});
