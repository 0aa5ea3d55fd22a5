import { describe, expect, it } from 'vitest';
import { AppError, RunStatus, type Clock } from '@trellis/core';
import type { RunListFilter } from '@trellis/services';
import type { DagRunRecord } from '@trellis/spec';
import { isoPlus, makeChildRecord, makeRecord } from '@trellis/testkit';
import type { ConformanceSubject } from './conformance-subject.js';
import { describeRunChangeStampConformance } from './run-change-stamp-conformance.js';
import { describeRunLifecycleConformance } from './run-lifecycle-conformance.js';
import { describeRunListingConformance } from './run-listing-conformance.js';

const T0 = '2026-01-02T03:04:05.000Z';
export const fixedClock: Clock = { now: () => new Date(T0), sleep: () => Promise.resolve() };
const snapshot = { dag: { name: 'etl', steps: [] }, localDags: [] };

const codeOf = async (p: Promise<unknown>): Promise<string | undefined> => {
  try {
    await p;
    return undefined;
  } catch (e) {
    return AppError.is(e) ? e.code : `not an AppError: ${String(e)}`;
  }
};

/**
 * The run store's behaviour, written once and run against every store (issue 20 item 3):
 * `tests/integration/store-conformance/fs-store.conformance.int.test.ts` and
 * `pg-store.conformance.int.test.ts`. `subject` makes an empty store (its clock `fixedClock`).
 */
export const describeRunStoreConformance = (
  label: string,
  subject: () => Promise<ConformanceSubject>,
): void => {
  describe(`${label}: run records`, () => {
    it('creates a run and reads back its record and snapshot', async () => {
      const { store } = await subject();
      const rec = makeRecord({ params: [{ name: 'DAY', value: 'mon' }] });
      await store.createRun(rec, snapshot);
      expect(await store.getRun(rec)).toEqual(rec);
      expect(await store.getSnapshot(rec)).toEqual(snapshot);
    });

    it('saves a new revision, node statuses included', async () => {
      const { store } = await subject();
      const rec = makeRecord();
      await store.createRun(rec, snapshot);
      const node = { step: { name: 'a' }, status: 4, startedAt: T0, finishedAt: T0 };
      const next = {
        ...rec,
        status: RunStatus.Running,
        revision: 1,
        nodes: [node],
      } as DagRunRecord;
      await store.saveRun(next);
      expect(await store.getRun(rec)).toEqual(next);
    });

    it('saveRunIf writes only over the expected revision, also against another instance', async () => {
      const { store: a, another } = await subject();
      const b = another();
      const rec = makeRecord({ status: RunStatus.Queued });
      await a.createRun(rec, snapshot);
      const started = { ...rec, status: RunStatus.Running, revision: 1 };
      const dequeued = { ...rec, status: RunStatus.Cancelled, revision: 1 };
      const [x, y] = await Promise.all([a.saveRunIf(started, 0), b.saveRunIf(dequeued, 0)]);
      expect([x, y].filter(Boolean)).toHaveLength(1);
      const stored = await another().getRun(rec);
      expect(stored.status).toBe(x ? RunStatus.Running : RunStatus.Cancelled);
      expect(await a.saveRunIf({ ...stored, revision: 2 }, 0)).toBe(false);
    });

    it('refuses a taken id as already_exists, also when two instances create it at once', async () => {
      const { store, another } = await subject();
      const results = await Promise.allSettled([
        store.createRun(makeRecord(), snapshot),
        another().createRun(makeRecord(), snapshot),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(await codeOf(store.createRun(makeRecord(), snapshot))).toBe('already_exists');
    });

    it('answers not_found for an unknown run, an unsaved run and a DAG without runs', async () => {
      const { store } = await subject();
      expect(await codeOf(store.getRun({ name: 'etl', dagRunId: 'nope' }))).toBe('not_found');
      expect(await codeOf(store.getSnapshot({ name: 'etl', dagRunId: 'nope' }))).toBe('not_found');
      expect(await codeOf(store.saveRun(makeRecord()))).toBe('not_found');
      expect(await codeOf(store.latestRun('other'))).toBe('not_found');
    });

    it('applies concurrent saves in call order and ignores an older revision from anyone', async () => {
      const { store, another } = await subject();
      const rec = makeRecord();
      await store.createRun(rec, snapshot);
      await Promise.all(
        [1, 2, 3, 10, 4, 5, 11].map((revision) =>
          store.saveRun({ ...rec, revision, error: `r${revision}` }),
        ),
      );
      expect(await store.getRun(rec)).toMatchObject({ revision: 11, error: 'r11' });
      await another().saveRun({ ...rec, revision: 7, error: 'late' });
      expect(await store.getRun(rec)).toMatchObject({ revision: 11, error: 'r11' });
    });

    it('serialises the record when saveRun is called', async () => {
      const { store } = await subject();
      const rec = makeRecord();
      await store.createRun(rec, snapshot);
      const changing = { ...rec, revision: 1, error: 'first' };
      const saved = store.saveRun(changing);
      changing.error = 'changed after the call';
      await saved;
      expect((await store.getRun(rec)).error).toBe('first');
    });
  });

  describe(`${label}: child runs`, () => {
    it('stores a child under its root, lists it as the root child, not as a top-level run', async () => {
      const { store } = await subject();
      const root = makeRecord();
      await store.createRun(root, snapshot);
      const child = makeChildRecord(root, { createdAt: isoPlus(T0, 1000) });
      await store.createRun(child, snapshot);
      expect(await store.getRun(child, { root: child.root })).toEqual(child);
      expect((await store.listChildren(root)).map((c) => c.dagRunId)).toEqual(['child-0001']);
      expect(await store.listRuns({ name: 'child' })).toEqual([]);
      expect(await store.listRuns({ name: 'child', includeChildren: true })).toHaveLength(1);
      expect((await store.listRuns()).map((r) => r.dagRunId)).toEqual(['run-0001']);
    });

    it('refuses a child whose root does not exist, and a second child with the same id', async () => {
      const { store } = await subject();
      const root = makeRecord();
      expect(await codeOf(store.createRun(makeChildRecord(root), snapshot))).toBe('not_found');
      await store.createRun(root, snapshot);
      await store.createRun(makeChildRecord(root), snapshot);
      expect(await codeOf(store.createRun(makeChildRecord(root), snapshot))).toBe('already_exists');
      expect(await codeOf(store.listChildren({ name: 'etl', dagRunId: 'nope' }))).toBe('not_found');
    });
  });

  describe(`${label}: history index and queue ledger`, () => {
    it('lists runs newest first and filters by name, status, dates, id and limit', async () => {
      const { store } = await subject();
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
      const ids = async (f: RunListFilter): Promise<string[]> =>
        (await store.listRuns(f)).map((r) => r.dagRunId);
      expect(await ids({})).toEqual(['run-0005', 'run-0004', 'run-0003', 'run-0002', 'run-0001']);
      expect(await ids({ name: 'odd' })).toEqual(['run-0005', 'run-0003', 'run-0001']);
      expect(await ids({ status: RunStatus.Failed })).toEqual(['run-0003']);
      const at = (i: number): number => Date.parse(T0) + i * 60_000;
      expect(await ids({ fromMs: at(2), toMs: at(4) })).toEqual([
        'run-0004',
        'run-0003',
        'run-0002',
      ]);
      expect(await ids({ dagRunIdContains: 'RUN-0004' })).toEqual(['run-0004']);
      expect(await ids({ limit: 2 })).toEqual(['run-0005', 'run-0004']);
      expect(await ids({ name: 'none' })).toEqual([]);
    });

    it('lists summaries without nodes, and the current status after a save', async () => {
      const { store } = await subject();
      const rec = makeRecord({ status: RunStatus.Queued, queuedAt: T0 });
      await store.createRun(rec, snapshot);
      expect((await store.listRuns({ status: RunStatus.Queued })).map((r) => r.dagRunId)).toEqual([
        'run-0001',
      ]);
      await store.saveRun({ ...rec, status: RunStatus.Running, revision: 1 });
      expect(await store.listRuns({ status: RunStatus.Queued })).toEqual([]);
      const [s] = await store.listRuns({ name: 'etl' });
      expect(s).toMatchObject({ status: RunStatus.Running, queue: 'etl', revision: 1 });
      expect(s).not.toHaveProperty('nodes');
    });

    it('returns the newest top-level run of a DAG as latest', async () => {
      const { store } = await subject();
      await store.createRun(makeRecord({ dagRunId: 'a', createdAt: isoPlus(T0, 2000) }), snapshot);
      await store.createRun(makeRecord({ dagRunId: 'b', createdAt: isoPlus(T0, 1000) }), snapshot);
      expect((await store.latestRun('etl')).dagRunId).toBe('a');
    });
  });
  describeRunLifecycleConformance(label, subject);
  describeRunListingConformance(label, subject);
  describeRunChangeStampConformance(label, subject);
};
