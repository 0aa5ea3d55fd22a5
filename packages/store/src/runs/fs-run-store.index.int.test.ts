import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunStatus, type Clock } from '@trellis/core';
import { isoPlus, makeChildRecord, makeRecord } from '@trellis/testkit';
import { FsRunStore } from './fs-run-store.js';

const T0 = '2026-01-02T03:04:05.000Z';
const clock: Clock = { now: () => new Date(T0), sleep: () => Promise.resolve() };
const snapshot = { dag: {}, localDags: [] };

let dir: string;
let warnings: string[];
const newStore = (): FsRunStore =>
  new FsRunStore({
    dataDir: join(dir, 'data'),
    logDir: join(dir, 'logs'),
    clock,
    warn: (m) => warnings.push(m),
  });
const indexPath = (dag = 'etl'): string => join(dir, 'data/runs', dag, 'index.jsonl');
const indexLines = (dag = 'etl'): string[] =>
  readFileSync(indexPath(dag), 'utf8').split('\n').filter(Boolean);
const ids = async (store: FsRunStore): Promise<string[]> =>
  (await store.listRuns()).map((r) => r.dagRunId);

const createRuns = async (store: FsRunStore, n: number, dag = 'etl'): Promise<void> => {
  for (let i = 1; i <= n; i++)
    await store.createRun(
      makeRecord({ name: dag, dagRunId: `run-${i}`, createdAt: isoPlus(T0, i * 1000) }),
      snapshot,
    );
};

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-index-'));
  warnings = [];
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('run index', () => {
  it('lists runs without reading any status.json', async () => {
    const store = newStore();
    await createRuns(store, 3);
    await store.saveRun(
      makeRecord({
        dagRunId: 'run-2',
        createdAt: isoPlus(T0, 2000),
        status: RunStatus.Failed,
        revision: 1,
      }),
    );
    for (let i = 1; i <= 3; i++) unlinkSync(join(dir, `data/runs/etl/run-${i}/status.json`));
    expect(await ids(store)).toEqual(['run-3', 'run-2', 'run-1']);
    // A fresh instance (another process) reads the index file, not the records.
    const other = newStore();
    expect(await ids(other)).toEqual(['run-3', 'run-2', 'run-1']);
    expect((await other.listRuns({ status: RunStatus.Failed })).map((r) => r.dagRunId)).toEqual([
      'run-2',
    ]);
  });

  it('appends a line only when a field a listing shows changes', async () => {
    const store = newStore();
    const rec = makeRecord();
    await store.createRun(rec, snapshot);
    expect(indexLines()).toHaveLength(1);
    for (let revision = 1; revision <= 5; revision++)
      await store.saveRun({
        ...rec,
        revision,
        preconditions: [{ condition: `c${revision}`, expected: '', error: '' }],
      });
    expect(indexLines()).toHaveLength(1);
    await store.saveRun({ ...rec, revision: 6, status: RunStatus.Running });
    expect(indexLines()).toHaveLength(2);
  });

  it('skips a torn last line, and reads the line appended after it', async () => {
    const store = newStore();
    await createRuns(store, 2);
    // A crash mid-append left half a line without its newline.
    appendFileSync(indexPath(), indexLines()[0]!.slice(0, 30));
    const other = newStore();
    expect(await ids(other)).toEqual(['run-2', 'run-1']);
    await other.createRun(
      makeRecord({ dagRunId: 'run-3', createdAt: isoPlus(T0, 3000) }),
      snapshot,
    );
    expect(await ids(newStore())).toEqual(['run-3', 'run-2', 'run-1']);
    expect(warnings).toEqual([]);
  });

  it('shows each store instance the runs and changes another instance appended', async () => {
    const a = newStore();
    const b = newStore();
    await createRuns(a, 1);
    expect(await ids(b)).toEqual(['run-1']);
    await b.createRun(makeRecord({ dagRunId: 'run-2', createdAt: isoPlus(T0, 2000) }), snapshot);
    await b.saveRun(
      makeRecord({
        dagRunId: 'run-1',
        createdAt: isoPlus(T0, 1000),
        status: RunStatus.Running,
        revision: 1,
      }),
    );
    expect(await ids(a)).toEqual(['run-2', 'run-1']);
    expect((await a.listRuns({ status: RunStatus.Running })).map((r) => r.dagRunId)).toEqual([
      'run-1',
    ]);
    await b.deleteRun({ name: 'etl', dagRunId: 'run-2' });
    expect(await ids(a)).toEqual(['run-1']);
  });

  it('rebuilds a missing index from the status files, children included', async () => {
    const store = newStore();
    await createRuns(store, 3);
    await store.createRun(makeChildRecord(makeRecord({ dagRunId: 'run-1' })), snapshot);
    unlinkSync(indexPath());
    const other = newStore();
    expect(await ids(other)).toEqual(['run-3', 'run-2', 'run-1']);
    expect(await other.listChildren({ name: 'etl', dagRunId: 'run-1' })).toHaveLength(1);
    expect(existsSync(indexPath())).toBe(true);
    unlinkSync(indexPath()); // also under an instance that had it loaded
    expect(await ids(other)).toEqual(['run-3', 'run-2', 'run-1']);
  });

  it('rebuilds an unreadable index and reports it', async () => {
    const store = newStore();
    await createRuns(store, 2);
    writeFileSync(
      indexPath(),
      `garbage that is not an index line\n${readFileSync(indexPath(), 'utf8')}`,
    );
    expect(await ids(newStore())).toEqual(['run-2', 'run-1']);
    expect(warnings.join('\n')).toMatch(/index .* was rebuilt from 2 status files/);
    expect(indexLines()).toHaveLength(2);
  });

  it('skips a corrupt record during a rebuild and reports it', async () => {
    const store = newStore();
    await createRuns(store, 2);
    writeFileSync(join(dir, 'data/runs/etl/run-1/status.json'), '{');
    unlinkSync(indexPath());
    expect(await ids(newStore())).toEqual(['run-2']);
    expect(warnings.join('\n')).toContain('run-1/status.json');
  });

  it('compacts the index once it holds over 4 lines per live run (and 64 at least), keeping every run', async () => {
    const store = newStore();
    await createRuns(store, 3);
    const rec = makeRecord({ dagRunId: 'run-1', createdAt: isoPlus(T0, 1000) });
    const other = newStore();
    expect(await ids(other)).toEqual(['run-3', 'run-2', 'run-1']); // loaded before compaction
    for (let revision = 1; revision <= 100; revision++)
      await store.saveRun({ ...rec, revision, error: `attempt ${revision}` });
    // 103 lines were appended; compaction (at 64 lines or more) rewrote them as one per run.
    expect(indexLines().length).toBeLessThan(64);
    expect(await ids(store)).toEqual(['run-3', 'run-2', 'run-1']);
    // The other instance notices the file was replaced and reads it again.
    const seen = await other.listRuns();
    expect(seen.map((r) => r.dagRunId)).toEqual(['run-3', 'run-2', 'run-1']);
    expect(seen.find((r) => r.dagRunId === 'run-1')?.error).toBe('attempt 100');
    expect(existsSync(`${indexPath()}.lock`)).toBe(false);
  });

  it('loses no change when two instances append and compact the same index at once', async () => {
    const a = newStore();
    const b = newStore();
    await createRuns(a, 4);
    const hammer = async (store: FsRunStore, id: string, at: number): Promise<void> => {
      const rec = makeRecord({ dagRunId: id, createdAt: isoPlus(T0, at) });
      for (let revision = 1; revision <= 120; revision++)
        await store.saveRun({ ...rec, revision, error: `attempt ${revision}` });
    };
    await Promise.all([
      hammer(a, 'run-1', 1000),
      hammer(b, 'run-2', 2000),
      hammer(a, 'run-3', 3000),
    ]);
    const seen = await newStore().listRuns();
    expect(seen.map((r) => [r.dagRunId, r.error])).toEqual([
      ['run-4', ''],
      ['run-3', 'attempt 120'],
      ['run-2', 'attempt 120'],
      ['run-1', 'attempt 120'],
    ]);
    expect(warnings).toEqual([]);
  });

  it('keeps the summary with the highest revision when lines arrive out of order', async () => {
    const store = newStore();
    await createRuns(store, 1);
    const rec = makeRecord({ dagRunId: 'run-1', createdAt: isoPlus(T0, 1000) });
    await store.saveRun({ ...rec, revision: 5, status: RunStatus.Succeeded });
    // A stale duplicate, as a writer re-appending after a concurrent compaction could leave.
    appendFileSync(
      indexPath(),
      `${JSON.stringify({ put: { ...rec, revision: 2, status: RunStatus.Running, nodes: undefined } })}\n`,
    );
    expect((await newStore().listRuns())[0]?.status).toBe(RunStatus.Succeeded);
  });
});
