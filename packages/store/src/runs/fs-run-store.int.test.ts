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

// What every run store does is checked once, for this store too, by the conformance suite
// (tests/integration/store-conformance/fs-store.conformance.int.test.ts); here only what is the
// file store's own: its folder layout, temporary and lock files, names that cannot be folders.
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
    expect(readdirSync(join(dir, 'data/runs/etl')).sort()).toEqual(['.changes', 'index.jsonl']);
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
