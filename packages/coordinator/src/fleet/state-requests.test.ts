import { describe, expect, it } from 'vitest';
import { AppError } from '@trellis/core';
import { twoCoordinators } from '../../test/support/two-coordinators.js';

const gpu = { pool: 'gpu' };

describe('cordon, drain and uncordon asked of a coordinator the worker is not connected to', () => {
  it('hands a cordon on to the coordinator that hears the worker, which applies it at its next sync', async () => {
    const { a, b, port, sync } = twoCoordinators();
    await b.beat('w1');
    await sync();
    const change = await a.workers.request('w1', 'cordoned');
    expect(change?.handedOn).toBe(true);
    expect(change?.worker).toMatchObject({ id: 'w1', state: 'cordoned', labels: gpu });
    // Not applied yet: b has not synced.
    expect(b.ctx.registry.adminStateOf('w1')).toBeUndefined();
    await b.fleet.sync();
    expect(b.ctx.registry.adminStateOf('w1')).toBe('cordoned');
    expect((await b.beat('w1')).adminState).toBe('cordoned');
    expect(b.workers.availability(gpu)).toBe('no healthy worker has labels pool=gpu');
    expect(await port.requests()).toEqual([]);
    await sync();
    expect(a.workers.list().find((w) => w.id === 'w1')?.state).toBe('cordoned');
    expect(a.workers.availability(gpu)).toBe('no healthy worker has labels pool=gpu');
  });

  it('hands on a drain, then an uncordon, each applied in turn', async () => {
    const { a, b, sync } = twoCoordinators();
    await b.beat('w1');
    await sync();
    expect((await a.workers.request('w1', 'draining'))?.worker.state).toBe('draining');
    await b.fleet.sync();
    expect((await b.beat('w1')).adminState).toBe('draining');
    expect((await a.workers.request('w1', 'active'))?.worker.state).toBe('active');
    await b.fleet.sync();
    expect(b.ctx.registry.adminStateOf('w1')).toBeUndefined();
    expect((await b.beat('w1')).adminState).toBe('');
  });

  it('applies it at once, not handed on, for a worker connected here', async () => {
    const { a, b, port, sync } = twoCoordinators();
    await a.beat('w1');
    await b.beat('w2');
    await sync();
    const change = await a.workers.request('w1', 'cordoned');
    expect(change).toMatchObject({ handedOn: false, worker: { id: 'w1', state: 'cordoned' } });
    expect(a.ctx.registry.adminStateOf('w1')).toBe('cordoned');
    expect(await port.requests()).toEqual([]);
  });

  it("lets a newer change made on the worker's coordinator win over an older request", async () => {
    const { a, b, port, sync } = twoCoordinators();
    await b.beat('w1');
    await sync();
    await a.workers.request('w1', 'cordoned');
    expect(await b.workers.request('w1', 'active')).toMatchObject({ handedOn: false });
    expect(await port.requests()).toEqual([]);
    await b.fleet.sync();
    expect(b.ctx.registry.adminStateOf('w1')).toBeUndefined();
  });

  it('answers undefined for a worker no coordinator knows', async () => {
    const { a, b, sync } = twoCoordinators();
    await b.beat('w1');
    await sync();
    expect(await a.workers.request('nope', 'cordoned')).toBeUndefined();
  });

  it("is applied by the worker's new coordinator when the worker moves before the old one syncs", async () => {
    const { a, b, clock, port, sync } = twoCoordinators();
    await a.beat('w1');
    await sync();
    expect((await b.workers.request('w1', 'cordoned'))?.handedOn).toBe(true);
    // w1 moves to b before a syncs: b hears it freshest and applies the request itself.
    await clock.advanceBy(1_000);
    await b.beat('w1');
    await b.fleet.sync();
    expect(b.ctx.registry.adminStateOf('w1')).toBe('cordoned');
    expect(await port.requests()).toEqual([]);
    await a.fleet.sync();
    expect(a.ctx.registry.adminStateOf('w1')).toBeUndefined();
  });

  it('leaves a request for the coordinator that hears the worker fresher', async () => {
    const { a, b, clock, port, sync } = twoCoordinators();
    await a.beat('w1');
    await sync();
    await clock.advanceBy(1_000);
    await b.beat('w1'); // moved to b; a still holds its older entry
    await sync();
    const change = await a.workers.request('w1', 'cordoned');
    expect(change?.handedOn).toBe(true);
    await a.fleet.sync();
    expect(a.ctx.registry.adminStateOf('w1')).toBeUndefined();
    expect(await port.requests()).toHaveLength(1);
    await b.fleet.sync();
    expect(b.ctx.registry.adminStateOf('w1')).toBe('cordoned');
  });

  it('drops a request no coordinator applied before it lapsed', async () => {
    const { a, b, clock, port, sync } = twoCoordinators();
    await b.beat('w1');
    await sync();
    await a.workers.request('w1', 'cordoned');
    await clock.advanceBy(16_000);
    await b.beat('w1');
    await b.fleet.sync();
    expect(b.ctx.registry.adminStateOf('w1')).toBeUndefined();
    expect(await port.requests()).toEqual([]);
  });

  it('answers 503 service_unavailable, naming Redis, when the request cannot be handed on', async () => {
    const { a, b, port, sync } = twoCoordinators();
    await b.beat('w1');
    await sync();
    port.down = true;
    const err = await a.workers.request('w1', 'cordoned').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: 'service_unavailable' });
    expect((err as Error).message).toBe(
      'worker "w1" is connected to the coordinator at coord-b:50055, and the request cannot reach it: Redis does not answer (Redis is not reachable); retry once Redis is back, or ask that coordinator\'s API',
    );
  });
});
