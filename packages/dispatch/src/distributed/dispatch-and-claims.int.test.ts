import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '@trellis/core';
import { CoordinatorClient } from '@trellis/coordinator';
import type { DagRunRecord } from '@trellis/spec';
import type { CoordinatorSide } from '../../test/support/fleet.js';
import { dagYaml, useWorkerFleet } from '../../test/support/worker-fleet-fixture.js';

/**
 * Distributed mode with real processes on loopback (issue 6, Tests): a private redis-server, the
 * coordinator and dispatcher in this process over a file store, and `trellis worker` processes
 * (the built binary) with different labels (test/support/worker-fleet-fixture.ts).
 */
const fleet = useWorkerFleet();
const { worker, joined, newId } = fleet;
let side: CoordinatorSide;
beforeAll(() => {
  side = fleet.side;
});

describe('distributed mode with worker processes', { timeout: 60_000 }, () => {
  it('routes runs only to workers whose labels match their selector', async () => {
    await Promise.all([worker('gpu-1', { gpu: 'true' }), worker('cpu-1', { gpu: 'false' })]);
    await Promise.all([joined('gpu-1'), joined('cpu-1')]);
    const gpu = dagYaml('on-gpu', { gpu: 'true' }, ['echo gpu']);
    const cpu = dagYaml('on-cpu', { gpu: 'false' }, ['echo cpu']);
    const runs: [string, string][] = [];
    for (let i = 0; i < 3; i++) {
      const a = newId();
      const b = newId();
      await side.submit(gpu, a);
      await side.submit(cpu, b);
      runs.push([a, 'gpu-1'], [b, 'cpu-1']);
    }
    for (const [id, expected] of runs) {
      const final = await side.final(id);
      expect(final.status).toBe(4);
      expect(final.owner?.workerId).toBe(expected);
    }
  });

  it('keeps a run waiting until a matching worker joins, then runs it', async () => {
    await worker('plain', { zone: 'a' });
    await joined('plain');
    const sel = { zone: 'b' };
    expect(side.coordinator.availability(sel)).toMatch(/no healthy worker has labels zone=b/);
    const id = newId();
    await side.submit(dagYaml('needs-b', sel, ['echo b']), id);
    // Heartbeats go on and the run is still unclaimed: nobody matches.
    await new Promise((r) => setTimeout(r, 1500));
    expect((await side.store.getRun({ name: 'needs-b', dagRunId: id })).owner?.workerId).toBe(
      'local',
    );
    const capacity = new Promise<void>((resolve) => {
      const off = side.coordinator.onCapacity(() => {
        if (side.coordinator.availability(sel) === null) {
          off();
          resolve();
        }
      });
    });
    await worker('zone-b', sel);
    await capacity;
    const final = await side.final(id);
    expect(final.status).toBe(4);
    expect(final.owner?.workerId).toBe('zone-b');
  });

  it('never runs more than a worker’s concurrency at once, across workers', async () => {
    await Promise.all([worker('c1', { pool: 'x' }, 1), worker('c2', { pool: 'x' }, 1)]);
    await Promise.all([joined('c1'), joined('c2')]);
    const ids = [newId(), newId(), newId(), newId()];
    const yaml = dagYaml('capped', { pool: 'x' }, ['sleep 0.4']);
    for (const id of ids) await side.submit(yaml, id);
    const finals = await Promise.all(ids.map((id) => side.final(id)));
    const byWorker = new Map<string, DagRunRecord[]>();
    for (const f of finals) {
      expect(f.status).toBe(4);
      const w = f.owner?.workerId ?? '';
      byWorker.set(w, [...(byWorker.get(w) ?? []), f]);
    }
    expect([...byWorker.keys()].sort()).toEqual(['c1', 'c2']);
    for (const list of byWorker.values()) {
      const spans = list
        .map((r) => [Date.parse(r.startedAt), Date.parse(r.finishedAt)] as const)
        .sort((a, b) => a[0] - b[0]);
      for (let i = 1; i < spans.length; i++)
        expect(spans[i]![0]).toBeGreaterThanOrEqual(spans[i - 1]![1]);
    }
  });

  it('delivers every line of a 100,000-line step', async () => {
    await worker('logs', { role: 'logs' });
    await joined('logs');
    const id = newId();
    await side.submit(dagYaml('many-lines', { role: 'logs' }, ['seq 1 100000']), id);
    const final = await side.final(id);
    expect(final.status).toBe(4);
    const text = readFileSync(final.nodes[0]!.stdout, 'utf8');
    const lines = text.split('\n');
    expect(lines.length).toBe(100_001);
    expect(lines[0]).toBe('1');
    expect(lines[99_999]).toBe('100000');
  });

  it('refuses a second claim of a run: a run never executes twice', async () => {
    const id = newId();
    const yaml = dagYaml('claimed-once', { nobody: 'here' }, ['echo once']);
    await side.submit(yaml, id);
    const client = new CoordinatorClient({
      address: `127.0.0.1:${side.coordinator.port}`,
      clock: systemClock,
    });
    const req = {
      run: { name: 'claimed-once', dagRunId: id },
      root: { name: 'claimed-once', dagRunId: id },
      host: 'h',
      pid: 1,
      processStart: '',
    };
    const first = await client.claim({ ...req, workerId: 'a' });
    const second = await client.claim({ ...req, workerId: 'b' });
    client.close();
    expect(first.granted).toBe(true);
    expect(second.granted).toBe(false);
    expect(second.reason).toMatch(/worker "a"/);
  });
});
