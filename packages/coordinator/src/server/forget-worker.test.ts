import { RunStatus } from '@trellis/core';
import type { FakeClock } from '@trellis/testkit';
import { describe, expect, it } from 'vitest';
import { record, ref, report, setup } from '../../test/support/coordinator-rooms.js';
import type { SharedFleet } from '../fleet/shared-fleet.js';
import { UNHEALTHY_MS } from '../registry/worker-health.js';
import { FORGET_AFTER_MS } from '../registry/worker-registry.js';
import { LostWorkers } from './lost-workers.js';
import { runKey } from './remote-runs.js';

/** A coordinator that heard worker w1, took its final report of r1 and dropped a run of it. */
const withKeptRuns = async () => {
  const c = setup();
  c.store.put(record());
  c.tracker.track(ref(), ref(), 'w1', {});
  await c.beat('w1', [{ ref: ref() }]);
  await c.reports.report(report(1, { ...record('r1', RunStatus.Succeeded), revision: 2 }));
  c.ctx.dropped.add('w1', runKey(ref('r2'), ref('r2')));
  expect(c.ctx.reported.has('w1', runKey(ref(), ref()))).toBe(true);
  const kept = (): boolean =>
    c.ctx.reported.has('w1', runKey(ref(), ref())) ||
    c.ctx.dropped.has('w1', runKey(ref('r2'), ref('r2')));
  return { ...c, kept, clock: c.ctx.deps.clock as FakeClock };
};

describe('a forgotten worker', () => {
  it('keeps no reported or dropped runs once it deregistered', async () => {
    const c = await withKeptRuns();
    expect(c.workers.deregister({ workerId: 'w1', incarnation: 'i1' })).toEqual({
      forgotten: true,
    });
    expect(c.kept()).toBe(false);
  });

  it('keeps none once the lost-worker sweep forgot it', async () => {
    const c = await withKeptRuns();
    c.clock.jumpTo(new Date(c.clock.now().getTime() + FORGET_AFTER_MS + 1).toISOString());
    await new LostWorkers(c.ctx).sweep();
    expect(c.ctx.registry.get('w1')).toBeUndefined();
    expect(c.kept()).toBe(false);
  });

  it('keeps none once it was handed over to another coordinator', async () => {
    const c = await withKeptRuns();
    c.clock.jumpTo(new Date(c.clock.now().getTime() + UNHEALTHY_MS + 1).toISOString());
    const lost = new LostWorkers(c.ctx);
    lost.fleet = { heardAfter: () => ({ advertise: 'b:1' }) } as unknown as SharedFleet;
    await lost.sweep();
    expect(c.ctx.registry.get('w1')).toBeUndefined();
    expect(c.kept()).toBe(false);
  });
});
