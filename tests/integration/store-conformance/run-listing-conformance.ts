import { describe, expect, it } from 'vitest';
import { RunStatus } from '@trellis/core';
import type { RunListFilter } from '@trellis/services';
import type { RunOwner } from '@trellis/spec';
import { isoPlus, makeChildRecord, makeRecord } from '@trellis/testkit';
import type { ConformanceStore, ConformanceSubject } from './conformance-subject.js';

const T0 = '2026-01-02T03:04:05.000Z';
const DAY = 86_400_000;
const snapshot = { dag: { name: 'etl', steps: [] }, localDags: [] };

const owner = (workerId: string): RunOwner => ({
  pid: 4242,
  host: 'worker-host',
  processStart: T0,
  workerId,
});

const idsOf =
  (store: ConformanceStore) =>
  async (f: RunListFilter & { includeChildren?: boolean } = {}): Promise<string[]> =>
    (await store.listRuns(f)).map((r) => r.dagRunId);

/**
 * The history listing's filters beyond the spec (`names`: the runs list's tag filter;
 * `workerId`) and what a listing shows of another instance's writes and deletions, for every
 * store (issue 20 item 3). Part of `describeRunStoreConformance`.
 */
export const describeRunListingConformance = (
  label: string,
  subject: () => Promise<ConformanceSubject>,
): void => {
  describe(`${label}: listing filters and other instances`, () => {
    it('filters by several DAG names and by the worker that executes a run', async () => {
      const { store } = await subject();
      const runs = [
        { name: 'a', worker: 'w1' },
        { name: 'b', worker: 'w2' },
        { name: 'c', worker: 'w1' },
        { name: 'a', worker: undefined },
      ];
      for (const [i, r] of runs.entries())
        await store.createRun(
          makeRecord({
            name: r.name,
            dagRunId: `run-000${i + 1}`,
            createdAt: isoPlus(T0, i * 60_000),
            ...(r.worker === undefined ? {} : { owner: owner(r.worker) }),
          }),
          snapshot,
        );
      const ids = idsOf(store);
      expect(await ids({ names: ['a', 'c'] })).toEqual(['run-0004', 'run-0003', 'run-0001']);
      expect(await ids({ names: ['a', 'c'], limit: 2 })).toEqual(['run-0004', 'run-0003']);
      expect(await ids({ names: ['none'] })).toEqual([]);
      expect(await ids({ workerId: 'w1' })).toEqual(['run-0003', 'run-0001']);
      expect(await ids({ workerId: 'w1', names: ['a', 'b'] })).toEqual(['run-0001']);
      expect(await ids({ workerId: 'w1', name: 'c' })).toEqual(['run-0003']);
      expect(await ids({ workerId: 'nobody' })).toEqual([]);
    });

    it("shows another instance's new runs, saves and deletions in its next listing", async () => {
      const { store, another } = await subject();
      const other = another();
      const ids = idsOf(store);
      const first = makeRecord({ dagRunId: 'run-0001', status: RunStatus.Queued });
      await store.createRun(first, snapshot);
      expect(await ids({ name: 'etl' })).toEqual(['run-0001']);

      const second = makeRecord({ dagRunId: 'run-0002', createdAt: isoPlus(T0, 1000) });
      await other.createRun(second, snapshot);
      await other.createRun(makeChildRecord(second, { createdAt: isoPlus(T0, 2000) }), snapshot);
      await other.saveRun({ ...first, status: RunStatus.Running, revision: 1, owner: owner('w9') });
      expect(await ids({ name: 'etl' })).toEqual(['run-0002', 'run-0001']);
      expect(await ids({ includeChildren: true })).toEqual(['child-0001', 'run-0002', 'run-0001']);
      expect(await ids({ status: RunStatus.Queued })).toEqual([]);
      expect(await ids({ workerId: 'w9' })).toEqual(['run-0001']);

      await other.deleteRun(second);
      expect(await ids({ includeChildren: true })).toEqual(['run-0001']);
      await other.createRun(second, snapshot); // the same id again, after its deletion
      expect(await ids({ name: 'etl' })).toEqual(['run-0002', 'run-0001']);
    });

    it("shows another instance's retention in its next listing", async () => {
      const { store, another } = await subject();
      const old = isoPlus(T0, -10 * DAY);
      for (const id of ['old-1', 'old-2'])
        await store.createRun(
          makeRecord({
            dagRunId: id,
            status: RunStatus.Succeeded,
            createdAt: old,
            finishedAt: old,
          }),
          snapshot,
        );
      await store.createRun(makeRecord({ dagRunId: 'new', status: RunStatus.Queued }), snapshot);
      expect(await idsOf(store)({ name: 'etl' })).toEqual(['new', 'old-2', 'old-1']);
      expect(await another().deleteRunsOlderThan('etl', 7)).toBe(2);
      expect(await idsOf(store)({ name: 'etl' })).toEqual(['new']);
    });
  });
};
