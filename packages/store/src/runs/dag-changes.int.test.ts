import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunStatus, systemClock } from '@trellis/core';
import { makeRecord } from '@trellis/testkit';
import { FsRunStore } from './fs-run-store.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-changes-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const open = (): FsRunStore =>
  new FsRunStore({ dataDir: join(dir, 'data'), logDir: join(dir, 'logs'), clock: systemClock });
const snapshot = { dag: { name: 'etl', steps: [] }, localDags: [] };

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
});
