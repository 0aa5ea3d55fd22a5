import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AppError, RunStatus, type Clock } from '@trellis/core';
import { isoPlus, makeChildRecord, makeRecord } from '@trellis/testkit';
import { FsRunStore } from './fs-run-store.js';

const T0 = '2026-01-02T03:04:05.000Z';
const fixedClock: Clock = { now: () => new Date(T0), sleep: () => Promise.resolve() };
const snapshot = { dag: { name: 'etl', steps: [] }, localDags: [] };

let dir: string;
let warnings: string[];
const newStore = (): FsRunStore =>
  new FsRunStore({
    dataDir: join(dir, 'data'),
    logDir: join(dir, 'logs'),
    clock: fixedClock,
    warn: (m) => warnings.push(m),
  });

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-store-'));
  warnings = [];
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Every file name under `root`, recursively. */
const filesUnder = (root: string): string[] =>
  readdirSync(root, { recursive: true, encoding: 'utf8' });

const codeOf = async (p: Promise<unknown>): Promise<string | undefined> => {
  try {
    await p;
    return undefined;
  } catch (e) {
    return AppError.is(e) ? e.code : `not an AppError: ${String(e)}`;
  }
};

describe('FsRunStore runs', () => {
  it('creates a run and reads back its record and snapshot from the documented layout', async () => {
    const store = newStore();
    const rec = makeRecord({ params: [{ name: 'DAY', value: 'mon' }] });
    await store.createRun(rec, snapshot);
    expect(await store.getRun(rec)).toEqual(rec);
    expect(await store.getSnapshot(rec)).toEqual(snapshot);
    expect(existsSync(join(dir, 'data/runs/etl/run-0001/status.json'))).toBe(true);
    expect(existsSync(join(dir, 'data/runs/etl/run-0001/dag.json'))).toBe(true);
    expect(existsSync(join(dir, 'logs/etl/run-0001'))).toBe(true);
  });

  it("creates runs after the DAG's runs folder was deleted behind its back", async () => {
    const store = newStore();
    await store.createRun(makeRecord({ dagRunId: 'run-0001' }), snapshot);
    rmSync(join(dir, 'data/runs/etl'), { recursive: true });
    const again = makeRecord({ dagRunId: 'run-0002' });
    await store.createRun(again, snapshot);
    expect(await store.getRun(again)).toEqual(again);
    expect((await store.listRuns({ name: 'etl' })).map((r) => r.dagRunId)).toEqual(['run-0002']);
  });

  it('saves a new revision over the old one', async () => {
    const store = newStore();
    const rec = makeRecord();
    await store.createRun(rec, snapshot);
    await store.saveRun({ ...rec, status: RunStatus.Running, startedAt: T0, revision: 1 });
    expect(await store.getRun(rec)).toMatchObject({ status: RunStatus.Running, revision: 1 });
  });

  it('saveRunIf writes only over the expected revision, also against another store instance', async () => {
    const a = newStore();
    const rec = makeRecord({ status: RunStatus.Queued });
    await a.createRun(rec, snapshot);
    const b = newStore(); // another process's view of the same folder
    const started = { ...rec, status: RunStatus.Running, revision: rec.revision + 1 };
    const dequeued = { ...rec, status: RunStatus.Cancelled, revision: rec.revision + 1 };
    const [x, y] = await Promise.all([
      a.saveRunIf(started, rec.revision),
      b.saveRunIf(dequeued, rec.revision),
    ]);
    expect([x, y].filter(Boolean)).toHaveLength(1);
    const stored = await newStore().getRun(rec);
    expect(stored.status).toBe(x ? RunStatus.Running : RunStatus.Cancelled);
    expect(await a.saveRunIf({ ...stored, revision: stored.revision + 1 }, rec.revision)).toBe(
      false,
    );
    expect(readdirSync(join(dir, 'data', 'runs', rec.name, rec.dagRunId))).not.toContain(
      '.swap.lock',
    );
  });

  it('refuses a second run with the same id as already_exists', async () => {
    const store = newStore();
    await store.createRun(makeRecord(), snapshot);
    expect(await codeOf(store.createRun(makeRecord(), snapshot))).toBe('already_exists');
  });

  it('refuses two concurrent creations of one id: exactly one wins', async () => {
    const a = newStore();
    const b = newStore();
    const results = await Promise.allSettled([
      a.createRun(makeRecord(), snapshot),
      b.createRun(makeRecord(), snapshot),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  });

  it('answers not_found for an unknown run, an unsaved run and an unusable id', async () => {
    const store = newStore();
    expect(await codeOf(store.getRun({ name: 'etl', dagRunId: 'nope' }))).toBe('not_found');
    expect(await codeOf(store.saveRun(makeRecord()))).toBe('not_found');
    expect(await codeOf(store.getRun({ name: '..', dagRunId: 'x' }))).toBe('not_found');
    expect(await codeOf(store.getRun({ name: 'etl', dagRunId: '../x' }))).toBe('not_found');
  });

  it('refuses to create a run whose name or id cannot be a folder name as bad_request', async () => {
    const store = newStore();
    expect(await codeOf(store.createRun(makeRecord({ name: '..' }), snapshot))).toBe('bad_request');
    expect(await codeOf(store.createRun(makeRecord({ dagRunId: 'a/b' }), snapshot))).toBe(
      'bad_request',
    );
  });

  it('stores a child run under its root run and lists it as the root child', async () => {
    const store = newStore();
    const root = makeRecord();
    await store.createRun(root, snapshot);
    const child = makeChildRecord(root, { createdAt: isoPlus(T0, 1000) });
    await store.createRun(child, snapshot);
    expect(existsSync(join(dir, 'data/runs/etl/run-0001/children/child-0001/status.json'))).toBe(
      true,
    );
    expect(await store.getRun(child, { root: child.root })).toEqual(child);
    expect((await store.listChildren(root)).map((c) => c.dagRunId)).toEqual(['child-0001']);
    expect(store.recorderFor(child).runLogPath).toBe(join(dir, 'logs/child/child-0001/run.log'));
    // A child is not a top-level run of its own DAG or of its root's.
    expect(await store.listRuns({ name: 'child' })).toEqual([]);
    expect((await store.listRuns({ name: 'child', includeChildren: true })).length).toBe(1);
    expect((await store.listRuns()).map((r) => r.dagRunId)).toEqual(['run-0001']);
  });

  it('refuses a child whose root does not exist, and a second child with the same id', async () => {
    const store = newStore();
    const root = makeRecord();
    expect(await codeOf(store.createRun(makeChildRecord(root), snapshot))).toBe('not_found');
    await store.createRun(root, snapshot);
    await store.createRun(makeChildRecord(root), snapshot);
    expect(await codeOf(store.createRun(makeChildRecord(root), snapshot))).toBe('already_exists');
  });

  it('lists runs newest first and filters by name, status, dates, id and limit', async () => {
    const store = newStore();
    for (let i = 1; i <= 5; i++)
      await store.createRun(
        makeRecord({
          name: i % 2 === 0 ? 'even' : 'odd',
          dagRunId: `run-000${i}`,
          createdAt: isoPlus(T0, i * 60_000),
          status: i === 3 ? RunStatus.Failed : RunStatus.Succeeded,
        }),
        snapshot,
      );
    const ids = async (f: Parameters<FsRunStore['listRuns']>[0]): Promise<string[]> =>
      (await store.listRuns(f)).map((r) => r.dagRunId);
    expect(await ids({})).toEqual(['run-0005', 'run-0004', 'run-0003', 'run-0002', 'run-0001']);
    expect(await ids({ name: 'odd' })).toEqual(['run-0005', 'run-0003', 'run-0001']);
    expect(await ids({ status: RunStatus.Failed })).toEqual(['run-0003']);
    const at = (i: number): number => Date.parse(T0) + i * 60_000;
    expect(await ids({ fromMs: at(2), toMs: at(4) })).toEqual(['run-0004', 'run-0003', 'run-0002']);
    expect(await ids({ dagRunIdContains: 'RUN-0004' })).toEqual(['run-0004']);
    expect(await ids({ limit: 2 })).toEqual(['run-0005', 'run-0004']);
    expect(await ids({ name: 'none' })).toEqual([]);
  });

  it('returns the newest run of a DAG as latest, and not_found when there is none', async () => {
    const store = newStore();
    await store.createRun(makeRecord({ dagRunId: 'a', createdAt: isoPlus(T0, 2000) }), snapshot);
    await store.createRun(makeRecord({ dagRunId: 'b', createdAt: isoPlus(T0, 1000) }), snapshot);
    expect((await store.latestRun('etl')).dagRunId).toBe('a');
    expect(await codeOf(store.latestRun('other'))).toBe('not_found');
  });

  it('applies concurrent saves in call order and ignores a save older than the record on disk', async () => {
    const store = newStore();
    const rec = makeRecord();
    await store.createRun(rec, snapshot);
    // Fired without awaiting, the way an engine reports quick state changes; one arrives late.
    const saves = [1, 2, 3, 10, 4, 5, 11].map((revision) =>
      store.saveRun({ ...rec, revision, error: `r${revision}` }),
    );
    await Promise.all(saves);
    expect(await store.getRun(rec)).toMatchObject({ revision: 11, error: 'r11' });
    // Another process's store instance with an older record does not win either.
    await newStore().saveRun({ ...rec, revision: 7, error: 'late' });
    expect(await store.getRun(rec)).toMatchObject({ revision: 11, error: 'r11' });
  });

  it('serialises the record when saveRun is called, so later changes by the caller do not leak', async () => {
    const store = newStore();
    const rec = makeRecord();
    await store.createRun(rec, snapshot);
    const live = { ...rec, revision: 1, error: 'first' };
    const saved = store.saveRun(live);
    live.error = 'changed after the call';
    await saved;
    expect((await store.getRun(rec)).error).toBe('first');
  });

  it('leaves no temporary files behind after many saves', async () => {
    const store = newStore();
    const rec = makeRecord();
    await store.createRun(rec, snapshot);
    await Promise.all(
      Array.from({ length: 50 }, (_, i) => store.saveRun({ ...rec, revision: i + 1 })),
    );
    expect(filesUnder(join(dir, 'data')).filter((f) => f.includes('.tmp-'))).toEqual([]);
  });

  it('reports a corrupt status.json as internal_error naming the file, and lists other runs', async () => {
    const store = newStore();
    await store.createRun(makeRecord({ dagRunId: 'good' }), snapshot);
    await store.createRun(makeRecord({ dagRunId: 'bad' }), snapshot);
    const path = join(dir, 'data/runs/etl/bad/status.json');
    writeFileSync(path, '{"revision":3,"name":"etl", torn');
    const err = await store.getRun({ name: 'etl', dagRunId: 'bad' }).catch((e: unknown) => e);
    expect(AppError.is(err) && err.code).toBe('internal_error');
    expect((err as Error).message).toContain(path);
    expect((await store.listRuns()).map((r) => r.dagRunId).sort()).toEqual(['bad', 'good']);
    // The next save of that run replaces the corrupt file.
    await store.saveRun(makeRecord({ dagRunId: 'bad', revision: 4 }));
    expect((await store.getRun({ name: 'etl', dagRunId: 'bad' })).revision).toBe(4);
  });

  it('deletes a run with its children and all their logs', async () => {
    const store = newStore();
    const root = makeRecord();
    await store.createRun(root, snapshot);
    const child = makeChildRecord(root);
    await store.createRun(child, snapshot);
    const rec = store.recorderFor(child);
    rec.log('child started');
    await rec.close();
    await store.deleteRun(root);
    expect(await codeOf(store.getRun(root))).toBe('not_found');
    expect(existsSync(join(dir, 'data/runs/etl/run-0001'))).toBe(false);
    expect(existsSync(join(dir, 'logs/etl/run-0001'))).toBe(false);
    expect(existsSync(join(dir, 'logs/child/child-0001'))).toBe(false);
    expect(await store.listRuns({ includeChildren: true })).toEqual([]);
    expect(readdirSync(join(dir, 'data/runs/etl'))).toEqual(['index.jsonl']);
    expect(await codeOf(store.deleteRun(root))).toBe('not_found');
  });
});

describe('FsRunStore recorder', () => {
  it('saves through the store and appends timestamped lines to run.log', async () => {
    const store = newStore();
    const rec = makeRecord();
    await store.createRun(rec, snapshot);
    const recorder = store.recorderFor(rec);
    await recorder.save({ ...rec, revision: 1, status: RunStatus.Running });
    recorder.log('run started');
    recorder.log('two\nlines');
    await recorder.close();
    expect((await store.getRun(rec)).status).toBe(RunStatus.Running);
    expect(recorder.runLogPath).toBe(join(dir, 'logs/etl/run-0001/run.log'));
    expect(readFileSync(recorder.runLogPath, 'utf8')).toBe(
      `${T0} run started\n${T0} two\n${T0} lines\n`,
    );
  });

  it('opens step logs under safe names and appends when a retry opens them again', async () => {
    const store = newStore();
    const rec = makeRecord();
    await store.createRun(rec, snapshot);
    const recorder = store.recorderFor(rec);
    for (const text of ['first\n', 'retry\n']) {
      const logs = await recorder.openStepLogs('build step/1');
      logs.stdout.write(text);
      logs.stderr.write('err\n');
      await logs.close();
    }
    const logs = await recorder.openStepLogs('build step/1');
    await logs.close();
    expect(logs.stdoutPath).toMatch(/\/logs\/etl\/run-0001\/build_step_1-[0-9a-f]{8}\.out$/);
    expect(logs.stderrPath).toBe(logs.stdoutPath.replace(/\.out$/, '.err'));
    expect(readFileSync(logs.stdoutPath, 'utf8')).toBe('first\nretry\n');
    expect(readFileSync(logs.stderrPath, 'utf8')).toBe('err\nerr\n');
    const handler = await recorder.openStepLogs('onExit');
    await handler.close();
    expect(handler.stdoutPath).toBe(join(dir, 'logs/etl/run-0001/onExit.out'));
  });
});
