import { describe, expect, it } from 'vitest';
import { RunStatus } from '@trellis/core';
import { record, ref, report, setup } from '../../test/support/coordinator-rooms.js';

/** The queued run `r1` on the store, claimed by worker w1 (the claim's save: revision 2). */
const claimed = async (soleCoordinator: boolean) => {
  const c = setup(undefined, { soleCoordinator });
  const queued = record('r1', RunStatus.Queued);
  c.store.put(queued);
  c.tracker.expect(queued, {});
  const claim = { workerId: 'w1', run: ref(), root: ref(), host: 'h', pid: 1, processStart: '' };
  await expect(c.claims.claim(claim)).resolves.toMatchObject({ granted: true });
  await c.claims.settled();
  c.store.calls.length = 0;
  return c;
};

describe('a report of a run this coordinator wrote last (the file store: no other coordinator)', () => {
  it('is written before the store is read, so the record is readable one read sooner', async () => {
    const c = await claimed(true);
    await expect(c.reports.report(report(1, { ...record(), revision: 3 }))).resolves.toEqual({
      appliedSeq: 1,
      dropped: false,
    });
    const final = { ...record('r1', RunStatus.Succeeded), revision: 4 };
    await expect(c.reports.report(report(2, final))).resolves.toEqual({
      appliedSeq: 2,
      dropped: false,
    });
    expect(c.store.calls).toEqual(['save r1 3', 'get r1', 'save r1 4', 'get r1']);
    expect(c.updates.map((u) => [u.status, u.revision])).toEqual([
      [RunStatus.Running, 2], // the claim
      [RunStatus.Running, 3],
      [RunStatus.Succeeded, 4],
    ]);
    expect(c.ctx.runs.get(ref(), ref())).toBeUndefined();
  });

  it('still sees a write that overtook it: the worker is told to drop the run, nothing is announced', async () => {
    const c = await claimed(true);
    // another writer failed the run meanwhile (a higher revision: the report's save is ignored)
    c.store.put({ ...record('r1', RunStatus.Failed), revision: 1002 });
    await expect(c.reports.report(report(1, { ...record(), revision: 3 }))).resolves.toEqual({
      appliedSeq: 1,
      dropped: true,
    });
    expect(c.store.peek(ref())).toMatchObject({ status: RunStatus.Failed, revision: 1002 });
    expect(c.updates.map((u) => u.revision)).toEqual([2]); // the claim only
    expect(c.ctx.runs.get(ref(), ref())).toBeUndefined();
  });

  it('a late copy of an applied report changes nothing and announces nothing', async () => {
    const c = await claimed(true);
    const running = { ...record(), revision: 3 };
    await c.reports.report(report(1, running));
    c.ctx.runs.get(ref(), ref())!.seq = 0; // as after the run was adopted again
    await expect(c.reports.report(report(1, running))).resolves.toEqual({
      appliedSeq: 1,
      dropped: false,
    });
    expect(c.store.calls.filter((l) => l.startsWith('save'))).toEqual(['save r1 3']);
    expect(c.updates.map((u) => u.revision)).toEqual([2, 3]);
  });
});

describe('a report when other coordinators may write the store (PostgreSQL)', () => {
  it('reads the store first, and writes only a newer record', async () => {
    const c = await claimed(false);
    await c.reports.report(report(1, { ...record(), revision: 3 }));
    expect(c.store.calls).toEqual(['get r1', 'save r1 3']);
  });
});
