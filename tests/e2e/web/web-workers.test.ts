import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  freePort,
  spawnWorker,
  startRedis,
  type PrivateRedis,
  type WorkerProcess,
} from '@trellis/dispatch/testing';
import { openBrowser, startServer, type BrowserSession, type Server } from './harness.js';

// A real server, Redis, worker and browser on a 2-core CI machine: room to spare.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

/*
 * The workers page in distributed mode: `trellis start-all` with SVC_REDIS_URL (coordinator and
 * BullMQ dispatch), a private redis-server and a real `trellis worker` process with labels.
 */

let redis: PrivateRedis;
let server: Server;
let worker: WorkerProcess;
let workerHome: string;
let b: BrowserSession;

beforeAll(async () => {
  redis = await startRedis();
  const grpcPort = await freePort();
  [server, b] = await Promise.all([
    startServer(
      {
        'gpu-sleep':
          'workerSelector:\n  gpu: "true"\nsteps:\n  - name: wait\n    command: sleep 30\n',
      },
      '',
      0,
      { args: ['--coordinator-port', String(grpcPort)], env: { SVC_REDIS_URL: redis.url } },
    ),
    openBrowser(),
  ]);
  workerHome = mkdtempSync(join(tmpdir(), 'trellis-e2e-web-worker-'));
  worker = await spawnWorker({
    id: 'web-gpu-1',
    labels: { gpu: 'true', zone: 'lab' },
    coordinator: `127.0.0.1:${grpcPort}`,
    redisUrl: redis.url,
    home: workerHome,
  });
});

afterAll(async () => {
  await b?.close();
  await worker?.stop();
  await server?.stop();
  await redis?.stop();
  if (workerHome) rmSync(workerHome, { recursive: true, force: true });
});

describe('the workers page with a real worker', () => {
  it('shows the worker healthy with its labels, then the task it runs', async () => {
    const { page } = b;
    await page.goto(`${server.url}/workers`);
    const card = page.getByRole('article', { name: 'Worker web-gpu-1' });
    await card.waitFor({ timeout: 30_000 });
    expect(await card.getAttribute('data-health')).toBe('healthy');
    const text = (await card.textContent()) ?? '';
    expect(text).toContain('gpu=true');
    expect(text).toContain('zone=lab');
    expect(text).toMatch(/Last heartbeat \d+s ago/);

    const started = (await (
      await fetch(`${server.url}/api/v2/dags/gpu-sleep/start`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{}',
      })
    ).json()) as { dagRunId: string };
    await card.getByRole('link', { name: 'gpu-sleep' }).waitFor({ timeout: 30_000 });
    expect(await card.textContent()).toContain(started.dagRunId);
    await b.shot('12-workers-with-task');
    await fetch(`${server.url}/api/v2/dag-runs/gpu-sleep/${started.dagRunId}/stop`, {
      method: 'POST',
    });
  });

  it('logged no console errors', () => {
    expect(b.problems).toEqual([]);
  });
});
