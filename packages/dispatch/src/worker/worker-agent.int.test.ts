import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '@trellis/core';
import { CoordinatorClient } from '@trellis/coordinator';
import { ShellCommandRunner, ShellExecutor } from '@trellis/executors';
import { createRedis } from '../remote/redis-connection.js';
import { startCoordinatorSide, type CoordinatorSide } from '../../test/support/fleet.js';
import { startRedis, type PrivateRedis } from '@trellis/testkit';
import { WorkerAgent } from './worker-agent.js';

let redis: PrivateRedis;
let side: CoordinatorSide;
const agents: WorkerAgent[] = [];

const startAgent = (id: string, labels: Record<string, string>, concurrency = 2): WorkerAgent => {
  const agent = new WorkerAgent({
    id,
    labels,
    concurrency,
    client: new CoordinatorClient({
      address: `127.0.0.1:${side.coordinator.port}`,
      clock: systemClock,
    }),
    redis: createRedis(redis.url),
    clock: systemClock,
    executors: { shell: new ShellExecutor() },
    commands: new ShellCommandRunner(),
    systemEnv: { PATH: '/usr/local/bin:/usr/bin:/bin' },
    defaultShell: 'sh',
    owner: { pid: process.pid, host: hostname(), processStart: '' },
    log: () => undefined,
    outboxDir: join(side.home, 'worker-outbox', id),
  });
  agent.start();
  agents.push(agent);
  return agent;
};

/** Resolves once the coordinator has a healthy worker with this id. */
const joined = (id: string): Promise<void> =>
  new Promise((resolve) => {
    const check = (): boolean => side.coordinator.workers().some((w) => w.id === id);
    if (check()) return resolve();
    const off = side.coordinator.onCapacity(() => {
      if (check()) {
        off();
        resolve();
      }
    });
  });

beforeAll(async () => {
  redis = await startRedis();
  side = await startCoordinatorSide(redis);
});

afterAll(async () => {
  for (const a of agents) await a.stop(0, 1000);
  await side.close();
  await redis.stop();
});

describe('worker agent (in-process, real redis-server and gRPC)', () => {
  it('runs a dispatched run and the coordinator stores its status and logs', async () => {
    startAgent('w-any', { zone: 'a' });
    await joined('w-any');
    const rec = await side.submit('name: hello\nsteps:\n  - echo hello from the worker\n', 'r1');
    const final = await side.final(rec.dagRunId);
    expect(final.status).toBe(4);
    expect(final.owner?.workerId).toBe('w-any');
    const stored = await side.store.getRun({ name: 'hello', dagRunId: 'r1' });
    expect(stored.status).toBe(4);
    expect(readFileSync(stored.nodes[0]!.stdout, 'utf8')).toBe('hello from the worker\n');
  });

  it('routes a run with a selector only to a matching worker', async () => {
    startAgent('w-gpu', { gpu: 'true' });
    await joined('w-gpu');
    const yaml = 'name: gpu-job\nworkerSelector:\n  gpu: "true"\nsteps:\n  - echo on gpu\n';
    const ids = ['g1', 'g2', 'g3'];
    for (const id of ids) await side.submit(yaml, id);
    for (const id of ids) {
      const f = await side.final(id);
      expect(f.status).toBe(4);
      expect(f.owner?.workerId).toBe('w-gpu');
    }
  });

  it('answers availability from the registry', () => {
    expect(side.coordinator.availability({ gpu: 'true' })).toBeNull();
    expect(side.coordinator.availability({ gpu: 'false' })).toMatch(
      /no healthy worker has labels gpu=false/,
    );
  });
});
