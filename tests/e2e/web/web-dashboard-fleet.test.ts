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
import { callApi, untilFinal } from '../support/start-all.js';
import { openBrowser, startServer, type BrowserSession, type Server } from './harness.js';

// A real server, Redis, two workers and a browser on a 2-core CI machine: room to spare.
vi.setConfig({ testTimeout: 90_000, hookTimeout: 90_000 });

/*
 * The dashboard in distributed mode (issue 18 item 1): `trellis start-all` with SVC_REDIS_URL
 * and a coordinator, a private redis-server and two real `trellis worker` processes.
 */

let redis: PrivateRedis;
let server: Server;
const workers: WorkerProcess[] = [];
const homes: string[] = [];
let b: BrowserSession;

beforeAll(async () => {
  redis = await startRedis();
  const grpcPort = await freePort();
  [server, b] = await Promise.all([
    startServer(
      {
        'fleet-sleep':
          'workerSelector:\n  pool: dash\nsteps:\n  - name: wait\n    command: sleep 30\n',
      },
      '',
      0,
      {
        args: ['--coordinator-port', String(grpcPort)],
        env: { SVC_REDIS_URL: redis.url },
      },
    ),
    openBrowser(),
  ]);
  for (const [id, concurrency] of [
    ['dash-w1', 2],
    ['dash-w2', 3],
  ] as const) {
    const home = mkdtempSync(join(tmpdir(), 'trellis-e2e-dash-worker-'));
    homes.push(home);
    workers.push(
      await spawnWorker({
        id,
        labels: { pool: 'dash' },
        concurrency,
        coordinator: `127.0.0.1:${grpcPort}`,
        redisUrl: redis.url,
        home,
      }),
    );
  }
});

afterAll(async () => {
  await b?.close();
  await Promise.all(workers.map((w) => w.stop()));
  await server?.stop();
  await redis?.stop();
  for (const h of homes) rmSync(h, { recursive: true, force: true });
});

const slots = (id: string) =>
  b.page.locator(`[data-worker="${id}"] [data-testid="slots"]`).textContent();

describe('the dashboard with a coordinator and two workers', () => {
  it('lists the workers with state, slots busy/total and heartbeat, and follows a run', async () => {
    const { page } = b;
    await page.goto(`${server.url}/`);
    await page.locator('[data-worker="dash-w2"]').waitFor({ timeout: 30_000 });
    await expect.poll(() => slots('dash-w1'), { timeout: 20_000 }).toBe('0/2 slots busy');
    await expect.poll(() => slots('dash-w2'), { timeout: 20_000 }).toBe('0/3 slots busy');
    const w1 = (await page.locator('[data-worker="dash-w1"]').textContent()) ?? '';
    expect(w1).toMatch(/healthy/);
    expect(w1).toMatch(/heartbeat (\d+s ago|just now)/);
    expect(await page.getByTestId('embedded-mode').count()).toBe(0);

    const r = await callApi(`${server.url}/api/v2`, 'POST', '/dags/fleet-sleep/start', {
      dagRunId: 'f1',
    });
    expect(r.status).toBe(200);
    await page.locator('.tl-bar[data-run="f1"]').waitFor({ timeout: 20_000 });
    // a DAG with a workerSelector runs on a worker; the coordinator knows the task once the
    // worker's heartbeat reports it
    await expect
      .poll(
        async () =>
          JSON.stringify((await callApi(`${server.url}/api/v2`, 'GET', '/dashboard')).body.workers),
        { timeout: 20_000 },
      )
      .toMatch(/"slotsBusy":1/);
    await expect
      .poll(async () => [await slots('dash-w1'), await slots('dash-w2')].join(' '), {
        timeout: 20_000,
      })
      .toMatch(/^(1\/2 slots busy 0\/3|0\/2 slots busy 1\/3) slots busy$/);
    await b.shot('dashboard-fleet');
    await callApi(`${server.url}/api/v2`, 'POST', '/dag-runs/fleet-sleep/f1/stop');
    await untilFinal(`${server.url}/api/v2`, 'fleet-sleep', 'f1', { attempts: 1500 });
    expect(b.problems).toEqual([]);
  });
});
