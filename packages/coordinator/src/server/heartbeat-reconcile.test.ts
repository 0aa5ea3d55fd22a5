import { describe, expect, it } from 'vitest';
import { RunStatus } from '@trellis/core';
import { record, ref, report, setup } from '../../test/support/coordinator-rooms.js';
import { busySlots } from './busy-slots.js';

describe('a run tracked on a worker that its heartbeats no longer list', () => {
  it('is failed once a restarted worker (new incarnation) no longer lists it, naming the worker; its late reports are refused', async () => {
    const c = setup();
    c.store.put(record());
    c.tracker.track(ref(), ref(), 'w1', {});
    await c.beat('w1', [{ ref: ref() }]);
    await c.beat('w1', [], 'i2');
    expect(c.store.peek(ref())).toMatchObject({
      status: RunStatus.Failed,
      error: 'worker "w1" restarted and no longer runs it (its heartbeats do not list it)',
    });
    expect(c.ctx.runs.get(ref(), ref())).toBeUndefined();
    expect(c.updates.map((u) => u.status)).toEqual([RunStatus.Failed]);
    const late = { ...record('r1', RunStatus.Succeeded), revision: 2 };
    expect(await c.reports.report(report(1, late))).toEqual({ appliedSeq: 1, dropped: true });
    expect(c.store.peek(ref())?.status).toBe(RunStatus.Failed);
  });

  it('waits for the final report while the same worker incarnation leaves it out (with one warning)', async () => {
    const c = setup();
    c.store.put(record());
    c.tracker.track(ref(), ref(), 'w1', {});
    await c.beat('w1', [{ ref: ref() }]);
    for (let i = 0; i < 3; i++) await c.beat('w1');
    expect(c.store.peek(ref())?.status).toBe(RunStatus.Running);
    expect(c.warnings).toEqual([
      'worker "w1" no longer lists run r1 of DAG "job": waiting for its final report (or the lost-worker rule)',
    ]);
    // The report the worker's outbox still held arrives: the result is kept.
    const done = { ...record('r1', RunStatus.Succeeded), revision: 2 };
    expect(await c.reports.report(report(1, done))).toEqual({ appliedSeq: 1, dropped: false });
    expect(c.store.peek(ref())?.status).toBe(RunStatus.Succeeded);
    expect(c.ctx.runs.get(ref(), ref())).toBeUndefined();
  });

  it('is kept while a heartbeat lists it again', async () => {
    const c = setup();
    c.store.put(record());
    c.tracker.track(ref(), ref(), 'w1', {});
    await c.beat('w1');
    await c.beat('w1', [{ ref: ref() }]);
    await c.beat('w1');
    expect(c.store.peek(ref())?.status).toBe(RunStatus.Running);
    expect(c.ctx.runs.get(ref(), ref())).toMatchObject({ workerId: 'w1' });
  });

  it('is just forgotten when its record already ended', async () => {
    const c = setup();
    c.store.put(record('r1', RunStatus.Succeeded));
    c.tracker.track(ref(), ref(), 'w1', {});
    await c.beat('w1');
    await c.beat('w1');
    expect(c.store.peek(ref())).toMatchObject({ status: RunStatus.Succeeded, error: '' });
    expect(c.ctx.runs.get(ref(), ref())).toBeUndefined();
    expect(c.updates).toEqual([]);
  });

  it('stays tracked when marking it failed cannot be written, and is failed at the next heartbeat', async () => {
    const c = setup();
    c.store.put(record());
    c.tracker.track(ref(), ref(), 'w1', {});
    await c.beat('w1', [{ ref: ref() }]);
    c.store.failSaves(1);
    await c.beat('w1', [], 'i2');
    expect(c.store.peek(ref())?.status).toBe(RunStatus.Running);
    expect(c.ctx.runs.get(ref(), ref())).toBeDefined();
    await c.beat('w1', [], 'i2');
    expect(c.store.peek(ref())?.status).toBe(RunStatus.Failed);
    expect(c.ctx.runs.get(ref(), ref())).toBeUndefined();
  });
});

describe('a run a worker lists that the coordinator does not track', () => {
  it('is adopted when its record is running and names that worker', async () => {
    const c = setup();
    c.store.put(record());
    await c.beat('w1', [{ ref: ref() }]);
    expect(c.ctx.runs.get(ref(), ref())).toMatchObject({ workerId: 'w1' });
    const next = await c.beat('w1', [{ ref: ref() }]);
    expect(next.drop).toEqual([]);
    const done = { ...record('r1', RunStatus.Succeeded), revision: 2 };
    expect(await c.reports.report(report(1, done))).toEqual({ appliedSeq: 1, dropped: false });
    expect(c.store.peek(ref())?.status).toBe(RunStatus.Succeeded);
  });

  it('is dropped when its record ended, belongs to another worker, or does not exist', async () => {
    const c = setup();
    c.store.put(record('ended', RunStatus.Failed));
    c.store.put(record('other', RunStatus.Running, 'w2'));
    const listed = [{ ref: ref('ended') }, { ref: ref('other') }, { ref: ref('ghost') }];
    expect((await c.beat('w1', listed)).drop).toEqual([]);
    expect((await c.beat('w1', listed)).drop).toEqual([ref('ended'), ref('other'), ref('ghost')]);
    expect(c.ctx.runs.all()).toEqual([]);
    expect(c.store.peek(ref('ended'))?.status).toBe(RunStatus.Failed);
    expect(c.store.peek(ref('other'))?.status).toBe(RunStatus.Running);
  });

  it('leaves a child run not stored yet to its first report', async () => {
    const c = setup();
    const parent = ref('parent');
    c.store.put(record('parent'));
    c.tracker.track(parent, parent, 'w1', {});
    const listed = [{ ref: parent }, { ref: ref('child'), parent }];
    await c.beat('w1', listed);
    expect((await c.beat('w1', listed)).drop).toEqual([]);
    expect(c.ctx.runs.get(ref('child'), ref('child'))).toBeUndefined();
  });
});

describe('a run whose final report the coordinator took', () => {
  it('is neither busy nor dropped while heartbeats sent before the answer still list it', async () => {
    const c = setup();
    c.store.put(record());
    c.tracker.track(ref(), ref(), 'w1', {});
    await c.beat('w1', [{ ref: ref() }]);
    const done = { ...record('r1', RunStatus.Succeeded), revision: 2 };
    expect(await c.reports.report(report(1, done))).toEqual({ appliedSeq: 1, dropped: false });
    // its slot is free at once, before any heartbeat
    expect(busySlots(c.ctx, 'w1')).toBe(0);
    // heartbeats the worker sent before the answer reached it
    for (let i = 0; i < 2; i++) {
      expect((await c.beat('w1', [{ ref: ref() }])).drop).toEqual([]);
      expect(busySlots(c.ctx, 'w1')).toBe(0);
    }
    await c.beat('w1');
    expect(c.warnings).toEqual([]);
    // listed again after a heartbeat without it: an ended run to drop, as any other
    await c.beat('w1', [{ ref: ref() }]);
    expect((await c.beat('w1', [{ ref: ref() }])).drop).toEqual([ref()]);
  });
});

describe('a final report stored by a coordinator that failed before answering', () => {
  /** Coordinator a stored w1's final report of r1, then died; b is fresh on the same store. */
  const failedOver = async () => {
    const a = setup();
    a.store.put(record());
    a.tracker.track(ref(), ref(), 'w1', {});
    await a.beat('w1', [{ ref: ref() }]);
    const final = report(1, { ...record('r1', RunStatus.Succeeded), revision: 2 });
    await a.reports.report(final);
    return { b: setup(a.store), final };
  };

  it('is taken by the next coordinator it is sent to: heartbeats that list the run are no warning', async () => {
    const { b, final } = await failedOver();
    expect(await b.reports.report(final)).toEqual({ appliedSeq: 1, dropped: false });
    // heartbeats w1 sent before b's answer reached it: the run is neither adopted nor dropped
    for (let i = 0; i < 2; i++) expect((await b.beat('w1', [{ ref: ref() }])).drop).toEqual([]);
    await b.beat('w1');
    expect(b.warnings).toEqual([]);
  });

  it('sent again after a heartbeat that lists the run: the run is dropped without a warning', async () => {
    const { b, final } = await failedOver();
    await b.beat('w1', [{ ref: ref() }]);
    expect((await b.beat('w1', [{ ref: ref() }])).drop).toEqual([ref()]);
    await b.reports.report(final);
    expect(b.warnings).toEqual([]);
  });
});
