import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CoordinatorSide } from '../../test/support/fleet.js';
import type { PrivateRedis } from '@trellis/testkit';
import { dagYaml, useWorkerFleet } from '../../test/support/worker-fleet-fixture.js';

/**
 * Distributed mode with real processes on loopback (issue 6, Tests): a private redis-server, the
 * coordinator and dispatcher in this process over a file store, and `trellis worker` processes
 * (the built binary) with different labels (test/support/worker-fleet-fixture.ts).
 */
const fleet = useWorkerFleet();
const { worker, joined, update, newId } = fleet;
let side: CoordinatorSide;
let redis: PrivateRedis;
beforeAll(() => {
  side = fleet.side;
  redis = fleet.redis;
});

describe('distributed mode with worker processes', { timeout: 60_000 }, () => {
  it('completes a run across a coordinator restart with every status and log line in order', async () => {
    await worker('survivor', { role: 'restart' });
    await joined('survivor');
    const id = newId();
    await side.submit(
      dagYaml('through-restart', { role: 'restart' }, [
        'for i in $(seq 1 40); do echo line $i; sleep 0.05; done',
        'echo second step',
      ]),
      id,
    );
    await update(id, (r) => r.nodes[0]?.status === 1);
    await side.restartCoordinator(1_000);
    const final = await side.final(id);
    expect(final.status).toBe(4);
    const out = readFileSync(final.nodes[0]!.stdout, 'utf8');
    expect(out).toBe(Array.from({ length: 40 }, (_, i) => `line ${i + 1}\n`).join(''));
    expect(readFileSync(final.nodes[1]!.stdout, 'utf8')).toBe('second step\n');
    const revisions = side.updates.filter((u) => u.dagRunId === id).map((u) => u.revision);
    expect(revisions).toEqual([...revisions].sort((a, b) => a - b));
  }, 30_000);

  it('keeps queued runs when Redis restarts', async () => {
    const ids = [newId(), newId(), newId()];
    const yaml = dagYaml('after-redis', { role: 'late' }, ['echo kept']);
    for (const id of ids) await side.submit(yaml, id);
    await redis.restart();
    await worker('late', { role: 'late' });
    for (const id of ids) {
      const final = await side.final(id);
      expect(final.status).toBe(4);
      expect(final.owner?.workerId).toBe('late');
    }
  }, 30_000);

  it('marks the runs of a killed worker failed, naming it, and frees its slot', async () => {
    const w = await worker('doomed', { role: 'doomed' }, 1);
    await joined('doomed');
    const id = newId();
    await side.submit(dagYaml('on-doomed', { role: 'doomed' }, ['sleep 60']), id);
    await update(id, (r) => r.nodes[0]?.status === 1);
    const killedAt = Date.now();
    w.kill('SIGKILL');
    const final = await side.final(id);
    expect(Date.now() - killedAt).toBeLessThan(20_000);
    expect(final.status).toBe(2);
    expect(final.error).toMatch(/worker "doomed" was lost/);
    expect(final.nodes[0]!.status).toBe(2);
    // Its slot is free: a new worker with the same labels takes the next run at once.
    await worker('doomed-2', { role: 'doomed' }, 1);
    await joined('doomed-2');
    const next = newId();
    await side.submit(dagYaml('on-doomed', { role: 'doomed' }, ['echo next']), next);
    expect((await side.final(next)).owner?.workerId).toBe('doomed-2');
  }, 60_000);

  it('tells a worker that comes back after being declared lost to drop its stale run', async () => {
    const w = await worker('sleeper', { role: 'sleeper' }, 1);
    await joined('sleeper');
    const id = newId();
    await side.submit(dagYaml('stale', { role: 'sleeper' }, ['sleep 40']), id);
    await update(id, (r) => r.nodes[0]?.status === 1);
    w.kill('SIGSTOP'); // frozen: no heartbeats
    const failed = await side.final(id);
    expect(failed.error).toMatch(/worker "sleeper" was lost/);
    w.kill('SIGCONT');
    await w.waitFor(/dropping run .*stale/);
    await new Promise((r) => setTimeout(r, 1_500));
    const stored = await side.store.getRun({ name: 'stale', dagRunId: id });
    expect(stored.status).toBe(2);
    expect(stored.error).toMatch(/worker "sleeper" was lost/);
  }, 60_000);
});
