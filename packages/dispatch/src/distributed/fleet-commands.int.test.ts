import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { beat, syncBoth, useRedisCoordinators } from '../../test/support/redis-coordinators.js';

/**
 * Cordon, drain and uncordon asked of a coordinator the worker is not connected to (issue 20):
 * handed on through a private redis-server to the coordinator that hears the worker, applied at
 * its next fleet sync and told to the worker in its heartbeat replies (docs/ha.md).
 */
const t = useRedisCoordinators('trellis-fleet-commands-');

const stateIn = (list: ReturnType<typeof t.a.workers>, id: string) =>
  list.find((w) => w.id === id)?.state;

describe('worker state changes across coordinators sharing one Redis', { timeout: 30_000 }, () => {
  it('a cordon asked of a for a worker on b reaches the worker: it takes no new runs', async () => {
    await beat(t.b, t.toB, 'w-c');
    await syncBoth(t);
    const change = await t.a.setWorkerState('w-c', 'cordoned');
    expect(change?.handedOn).toBe(true);
    expect(change?.worker).toMatchObject({ id: 'w-c', state: 'cordoned', labels: { pool: 'w-c' } });
    await t.b.syncFleet(); // b's fleet sync applies it
    expect((await beat(t.b, t.toB, 'w-c')).adminState).toBe('cordoned');
    expect(t.b.availability({ pool: 'w-c' })).toBe('no healthy worker has labels pool=w-c');
    expect(stateIn(t.b.workers(), 'w-c')).toBe('cordoned');
    await syncBoth(t);
    expect(stateIn(t.a.workers(), 'w-c')).toBe('cordoned');
    expect(t.a.availability({ pool: 'w-c' })).toBe('no healthy worker has labels pool=w-c');
    // and back: uncordoned through a too
    expect((await t.a.setWorkerState('w-c', 'active'))?.handedOn).toBe(true);
    await t.b.syncFleet();
    expect((await beat(t.b, t.toB, 'w-c')).adminState).toBe('');
    expect(t.b.availability({ pool: 'w-c' })).toBeNull();
  });

  it('a drain asked of a for a worker on b makes the worker drain', async () => {
    await beat(t.b, t.toB, 'w-d');
    await syncBoth(t);
    expect((await t.a.setWorkerState('w-d', 'draining'))?.worker.state).toBe('draining');
    await t.b.syncFleet();
    expect((await beat(t.b, t.toB, 'w-d')).adminState).toBe('draining');
    await syncBoth(t);
    expect(stateIn(t.b.workers(), 'w-d')).toBe('draining');
    expect(stateIn(t.a.workers(), 'w-d')).toBe('draining');
  });

  it('is undefined (404 in the API) for a worker no coordinator knows', async () => {
    expect(await t.a.setWorkerState('nobody', 'cordoned')).toBeUndefined();
  });

  it('rejects with 503 service_unavailable naming Redis while Redis is down', async () => {
    await beat(t.b, t.toB, 'w-r');
    await syncBoth(t);
    const closed = t.conns.map((c) => once(c, 'close'));
    await t.redis.stop();
    await Promise.all(closed);
    const err = await t.a.setWorkerState('w-r', 'cordoned').catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'service_unavailable' });
    expect((err as Error).message).toMatch(
      /^worker "w-r" is connected to the coordinator at 127\.0\.0\.1:\d+, and the request cannot reach it: Redis does not answer \(the Redis connection is \w+\); retry once Redis is back/,
    );
  });
});
