import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AppError, type Clock } from '@trellis/core';
import { makeChildRecord, makeRecord } from '@trellis/testkit';
import { FsRunStore } from '../runs/fs-run-store.js';
import { watchStopFile } from './stop-request.js';

const clock: Clock = {
  now: () => new Date('2026-01-02T03:04:05Z'),
  sleep: () => Promise.resolve(),
};
const snapshot = { dag: {}, localDags: [] };
let dir: string;
const newStore = (): FsRunStore =>
  new FsRunStore({ dataDir: join(dir, 'data'), logDir: join(dir, 'logs'), clock });

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-stop-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A promise that resolves when the returned callback is first called, counting calls. */
const signal = (): { fired: Promise<void>; onStop: () => void; calls: () => number } => {
  let n = 0;
  let resolve = (): void => undefined;
  const fired = new Promise<void>((r) => (resolve = r));
  return {
    fired,
    onStop: () => {
      n++;
      resolve();
    },
    calls: () => n,
  };
};

describe('stop requests', () => {
  it('reach a watcher in another store instance (another process) once', async () => {
    const runner = newStore();
    const cli = newStore();
    const rec = makeRecord();
    await runner.createRun(rec, snapshot);
    const s = signal();
    const dispose = runner.watchStop(rec, {}, s.onStop);
    expect(runner.isStopRequested(rec)).toBe(false);
    await cli.requestStop(rec);
    await s.fired;
    await cli.requestStop(rec); // a second request does not call again
    await new Promise((r) => setImmediate(r));
    dispose();
    expect(s.calls()).toBe(1);
    expect(runner.isStopRequested(rec)).toBe(true);
  });

  it('fire at once for a run whose stop was requested before watching', async () => {
    const store = newStore();
    const rec = makeRecord();
    await store.createRun(rec, snapshot);
    await store.requestStop(rec);
    const s = signal();
    store.watchStop(rec, {}, s.onStop);
    await s.fired;
  });

  it('address a child run through its root', async () => {
    const store = newStore();
    const root = makeRecord();
    await store.createRun(root, snapshot);
    const child = makeChildRecord(root);
    await store.createRun(child, snapshot);
    const s = signal();
    store.watchStop(child, { root: child.root }, s.onStop);
    await newStore().requestStop(child, { root: child.root });
    await s.fired;
    expect(store.isStopRequested(root)).toBe(false);
  });

  it('are refused as not_found for a run that does not exist', async () => {
    const err = await newStore()
      .requestStop({ name: 'etl', dagRunId: 'nope' })
      .catch((e: unknown) => e);
    expect(AppError.is(err) && err.code).toBe('not_found');
  });

  it('do not call a disposed watcher', async () => {
    const store = newStore();
    const rec = makeRecord();
    await store.createRun(rec, snapshot);
    const s = signal();
    store.watchStop(rec, {}, s.onStop)();
    await store.requestStop(rec);
    const later = signal();
    store.watchStop(rec, {}, later.onStop);
    await later.fired; // a live watcher saw the file, so the disposed one had its chance
    expect(s.calls()).toBe(0);
  });

  it('are still seen by polling when the folder cannot be watched', async () => {
    const runDir = join(dir, 'not-yet');
    const s = signal();
    const dispose = watchStopFile(runDir, s.onStop); // fs.watch fails: no such folder
    await new Promise((r) => setImmediate(r)); // the first check has run and found nothing
    expect(s.calls()).toBe(0);
    mkdirSync(runDir);
    writeFileSync(join(runDir, 'stop-requested'), 'now\n');
    await s.fired; // within one poll interval (1 s)
    dispose();
  });
});
