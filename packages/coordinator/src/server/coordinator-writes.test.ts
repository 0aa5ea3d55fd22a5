import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { RunStatus } from '@trellis/core';
import { record, ref, report, setup } from '../../test/support/coordinator-rooms.js';

describe('status reports are acknowledged only once written', () => {
  it('answers UNAVAILABLE when the store refuses a report, and applies it when it comes again', async () => {
    const c = setup();
    c.store.put(record());
    c.tracker.track(ref(), ref(), 'w1', {});
    const final = { ...record('r1', RunStatus.Succeeded), revision: 2 };
    c.store.failSaves(1);
    await expect(c.reports.report(report(1, final))).rejects.toMatchObject({
      code: grpc.status.UNAVAILABLE,
      details: expect.stringMatching(/report 1 of run r1 .*disk full.*send it again/),
    });
    expect(c.store.peek(ref())?.status).toBe(RunStatus.Running);
    expect(c.ctx.runs.get(ref(), ref())).toBeDefined();
    expect(c.updates).toEqual([]);
    // The worker sends it again: applied now, and the run ends here.
    await expect(c.reports.report(report(1, final))).resolves.toEqual({
      appliedSeq: 1,
      dropped: false,
    });
    expect(c.store.peek(ref())?.status).toBe(RunStatus.Succeeded);
    expect(c.ctx.runs.get(ref(), ref())).toBeUndefined();
    expect(c.updates.map((u) => u.status)).toEqual([RunStatus.Succeeded]);
  });
});

describe('two coordinators on one store (a worker that moved)', () => {
  it('apply each report once: the store, not one process, says what was applied', async () => {
    const a = setup();
    const b = setup(a.store);
    a.store.put(record());
    a.tracker.track(ref(), ref(), 'w1', {});
    const running = { ...record(), revision: 2 };
    const final = { ...record('r1', RunStatus.Succeeded), revision: 3 };
    await expect(a.reports.report(report(1, running))).resolves.toEqual({
      appliedSeq: 1,
      dropped: false,
    });
    // a died before its ack reached the worker: the worker sends report 1 again, to b
    await expect(b.reports.report(report(1, running))).resolves.toEqual({
      appliedSeq: 1,
      dropped: false,
    });
    expect(b.updates).toEqual([]);
    await b.reports.report(report(2, final));
    expect(b.updates.map((u) => u.status)).toEqual([RunStatus.Succeeded]);
    // a late copy of either, to either, changes nothing and announces nothing
    for (const [c, seq, rec] of [
      [a, 1, running],
      [a, 2, final],
      [b, 2, final],
    ] as const)
      await expect(c.reports.report(report(seq, rec))).resolves.toMatchObject({ dropped: false });
    expect(a.store.peek(ref())).toMatchObject({ status: RunStatus.Succeeded, revision: 3 });
    expect(a.updates.map((u) => u.status)).toEqual([RunStatus.Running]);
    expect(b.updates.map((u) => u.status)).toEqual([RunStatus.Succeeded]);
    expect(a.ctx.runs.get(ref(), ref())).toBeUndefined();
  });

  it('tells the worker to drop a run another coordinator failed meanwhile', async () => {
    const a = setup();
    const b = setup(a.store);
    a.store.put(record());
    b.tracker.track(ref(), ref(), 'w1', {});
    a.store.put({ ...record('r1', RunStatus.Failed), revision: 1001 });
    await expect(b.reports.report(report(1, { ...record(), revision: 2 }))).resolves.toEqual({
      appliedSeq: 1,
      dropped: true,
    });
    expect(a.store.peek(ref())?.status).toBe(RunStatus.Failed);
    expect(b.updates).toEqual([]);
  });
});

describe('a run that never reached a worker is forgotten only once its end is written', () => {
  it('keeps tracking it when the save fails, refuses claims meanwhile, and ends it on a retry', async () => {
    const c = setup();
    const queued = record('r1', RunStatus.Queued);
    c.store.put(queued);
    c.tracker.expect(queued, {});
    c.store.failSaves(1);
    await expect(
      c.tracker.finishUnclaimed(ref(), RunStatus.Cancelled, 'dequeued', ref()),
    ).rejects.toThrow(/disk full/);
    expect(c.store.peek(ref())?.status).toBe(RunStatus.Queued);
    expect(c.ctx.runs.get(ref(), ref())).toMatchObject({ workerId: undefined, finishing: false });
    // The retry, with a worker claiming the run while its end is being written.
    const ending = c.tracker.finishUnclaimed(ref(), RunStatus.Cancelled, 'dequeued', ref());
    const claim = await c.claims.claim({
      workerId: 'w1',
      run: ref(),
      root: ref(),
      host: 'h',
      pid: 1,
      processStart: '',
    });
    expect(claim).toMatchObject({ granted: false, reason: expect.stringMatching(/being ended/) });
    await expect(ending).resolves.toBe(true);
    expect(c.store.peek(ref())).toMatchObject({ status: RunStatus.Cancelled, error: 'dequeued' });
    expect(c.ctx.runs.get(ref(), ref())).toBeUndefined();
    expect(c.updates.map((u) => u.status)).toEqual([RunStatus.Cancelled]);
  });
});
