import { describe, expect, it } from 'vitest';
import { NodeStatus, RunStatus } from '@trellis/core';
import type { DagRunRecord, NodeRecord } from '@trellis/spec';
import { isoPlus, makeChildRecord, makeRecord } from '@trellis/testkit';
import type { ConformanceStore, ConformanceSubject } from './conformance-subject.js';

const T0 = '2026-01-02T03:04:05.000Z';
const snapshot = { dag: { name: 'etl', steps: [] }, localDags: [] };
const DAY = 86_400_000;

const node = (name: string, status: NodeStatus): NodeRecord =>
  ({ step: { name }, status, startedAt: T0, finishedAt: T0 }) as NodeRecord;

/** A finished run of `etl` with two steps; `over` changes fields of it. */
const finished = (over: Partial<DagRunRecord> = {}): DagRunRecord =>
  makeRecord({
    status: RunStatus.Succeeded,
    finishedAt: T0,
    nodes: [node('extract', NodeStatus.Succeeded), node('load', NodeStatus.Succeeded)],
    ...over,
  });

/**
 * Each look at the stamp of `etl` (by the writing instance and by another one) after a write
 * must differ from every look before it, and two looks with no write between must agree: what
 * lets the run history grid keep its answer per DAG (docs/decisions.md, "A per-DAG change
 * stamp"). Undefined (the store cannot vouch) is always allowed, and is what the PostgreSQL
 * store answers past its listing's memory limit.
 */
const stampWatch = (readers: readonly ConformanceStore[]) => {
  const seen = new Set<string>();
  let defined = 0;
  return {
    async changed(what: string): Promise<void> {
      const now: string[] = [];
      for (const r of readers) {
        const stamp = await r.changeStamp('etl');
        expect(await r.changeStamp('etl'), `${what}: a second look`).toBe(stamp);
        if (stamp === undefined) continue;
        expect(seen.has(stamp), `${what}: the stamp ${stamp} was seen before the write`).toBe(
          false,
        );
        now.push(stamp);
      }
      for (const s of now) seen.add(s);
      defined += now.length;
    },
    async unchanged(what: string): Promise<void> {
      for (const r of readers) {
        const stamp = await r.changeStamp('etl');
        if (stamp !== undefined) expect(seen.has(stamp), what).toBe(true);
      }
    },
    get defined(): number {
      return defined;
    },
  };
};

/** The change stamp of a DAG's runs: the third part of the conformance suite. */
export const describeRunChangeStampConformance = (
  label: string,
  subject: () => Promise<ConformanceSubject>,
): void => {
  describe(`${label}: change stamp of a DAG's runs`, () => {
    it('changes with every write of a record of the DAG, by this instance or another', async () => {
      const s = await subject();
      const { store } = s;
      const other = s.another();
      const watch = stampWatch([store, s.another()]);
      const rec = finished();
      await store.createRun(rec, snapshot);
      await watch.changed('created');
      await watch.unchanged('no write');
      await other.createRun(makeRecord({ name: 'other' }), snapshot);
      await watch.unchanged("another DAG's run created");

      // a step's status in a finished run: no summary field changes
      await store.saveRun(finished({ revision: 1, nodes: [node('extract', NodeStatus.Failed)] }));
      await watch.changed('a step status saved');
      // two writes at one revision (setStepStatus, recovery in two processes)
      await other.saveRun(finished({ revision: 1, nodes: [node('load', NodeStatus.Failed)] }));
      await watch.changed("another instance's save at the same revision");
      expect(await other.saveRunIf(finished({ revision: 2, error: 'swapped' }), 1)).toBe(true);
      await watch.changed('swapped in by another instance');
      await store.saveRun(finished({ revision: 1, error: 'late' }));
      await watch.unchanged('a late save (older revision), not written');

      const child = makeChildRecord(rec);
      await store.createRun(child, snapshot);
      await watch.changed('a child stored under a run of the DAG');
      await other.saveRun({ ...child, revision: 1, status: RunStatus.Failed });
      await watch.changed("another instance's save of the child");
      await other.deleteRun(rec);
      await watch.changed("another instance's deletion");

      const old = isoPlus(T0, -10 * DAY);
      await other.createRun(
        finished({ dagRunId: 'old', createdAt: old, finishedAt: old }),
        snapshot,
      );
      await watch.changed('an old run created');
      expect(await other.deleteRunsOlderThan('etl', 7)).toBe(1);
      await watch.changed('deleted by retention');
      if (s.noChangeStamps !== true) expect(watch.defined).toBeGreaterThan(0);
    });
  });
};
