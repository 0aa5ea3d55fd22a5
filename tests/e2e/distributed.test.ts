import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  freePort,
  spawnWorker,
  startRedis,
  type PrivateRedis,
  type WorkerProcess,
} from '@trellis/dispatch/testing';
import { parseExposition, sampleValue } from '@trellis/testkit';
import {
  callApi,
  startAll,
  untilFinal as untilFinalOf,
  type StartAll,
} from './support/start-all.js';

/**
 * Distributed mode end to end (issue 6): `trellis start-all` with SVC_REDIS_URL serves the API and
 * the gRPC coordinator; two `trellis worker` processes with different labels; runs started through
 * the API go to the matching worker (admission -> dispatcher -> BullMQ -> worker -> coordinator).
 */

let redis: PrivateRedis;
let home: string;
let server: StartAll;
let base: string;
let grpcPort: number;
const workers: WorkerProcess[] = [];

const call = (method: string, path: string, body?: unknown) => callApi(base, method, path, body);

const scrape = async () => parseExposition(await (await fetch(`${base}/metrics`)).text());

const untilFinal = (name: string, id: string) =>
  untilFinalOf(base, name, id, { attempts: 1500, context: () => server.output() });

beforeAll(async () => {
  redis = await startRedis();
  home = mkdtempSync(join(tmpdir(), 'trellis-e2e-fleet-'));
  grpcPort = await freePort();
  // A custom queue whose cap must hold across both workers.
  writeFileSync(join(home, 'config.yaml'), 'queues:\n  - name: fleetq\n    maxConcurrency: 1\n');
  server = await startAll(
    { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, SVC_HOME: home, SVC_REDIS_URL: redis.url },
    ['--coordinator-port', String(grpcPort)],
  );
  base = `${server.url}/api/v2`;
  const whome = mkdtempSync(join(tmpdir(), 'trellis-e2e-worker-'));
  workers.push(
    ...(await Promise.all([
      spawnWorker({
        id: 'e2e-gpu',
        labels: { gpu: 'true' },
        coordinator: `127.0.0.1:${grpcPort}`,
        redisUrl: redis.url,
        home: whome,
      }),
      spawnWorker({
        id: 'e2e-cpu',
        labels: { gpu: 'false' },
        coordinator: `127.0.0.1:${grpcPort}`,
        redisUrl: redis.url,
        home: whome,
      }),
    ])),
  );
}, 60_000);

afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await server.stop();
  await redis.stop();
  rmSync(home, { recursive: true, force: true });
}, 60_000);

describe('trellis start-all with SVC_REDIS_URL and two workers', { timeout: 60_000 }, () => {
  it('lists both workers, healthy, in the spec shape', async () => {
    let workersBody: { id: string }[] = [];
    for (let i = 0; i < 200 && workersBody.length < 2; i++) {
      workersBody = (await call('GET', '/workers')).body.workers as { id: string }[];
      if (workersBody.length < 2) await new Promise((r) => setTimeout(r, 50));
    }
    const r = await call('GET', '/workers');
    expect(r.status).toBe(200);
    const list = r.body.workers as Record<string, unknown>[];
    expect(list.map((w) => w.id)).toEqual(['e2e-cpu', 'e2e-gpu']);
    expect(list[1]).toMatchObject({
      id: 'e2e-gpu',
      labels: { gpu: 'true' },
      health_status: 'WORKER_HEALTH_STATUS_HEALTHY',
      running_tasks: [],
    });
    expect(list[1]!.last_heartbeat).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it('runs a DAG with a workerSelector on the matching worker, from an API start', async () => {
    const spec =
      'workerSelector:\n  gpu: "true"\nsteps:\n  - name: where\n    command: echo "on $HOSTNAME_LABEL"\n    env:\n      - HOSTNAME_LABEL: gpu-box\n';
    expect((await call('POST', '/dags', { name: 'gpu-job', spec })).status).toBe(201);
    const started = await call('POST', '/dags/gpu-job/start', {});
    expect(started.status).toBe(200);
    const id = started.body.dagRunId as string;
    const run = await untilFinal('gpu-job', id);
    expect(run).toMatchObject({ status: 4 });
    const log = await call('GET', `/dag-runs/gpu-job/${id}/steps/where/log`);
    expect(log.body).toMatchObject({ content: 'on gpu-box' });
    expect(workers[0]!.output()).toMatch(new RegExp(`running run ${id}`));
    expect(workers[1]!.output()).not.toMatch(new RegExp(id));
  });

  it("sends a child run to the workers its step's workerSelector names, from a parent on another worker", async () => {
    // Workers have no DAGs folder: the child is defined in the parent's file.
    const spec = [
      'workerSelector:\n  gpu: "true"',
      'steps:',
      '  - name: hand-off\n    call: kid\n    workerSelector:\n      gpu: "false"',
      '---',
      'name: kid',
      'steps:\n  - name: where\n    command: echo kid-ran',
      '',
    ].join('\n');
    expect((await call('POST', '/dags', { name: 'fleet-parent', spec })).status).toBe(201);
    const started = await call('POST', '/dags/fleet-parent/start', {});
    expect(started.status).toBe(200);
    const id = started.body.dagRunId as string;
    expect(await untilFinal('fleet-parent', id)).toMatchObject({ status: 4 });
    // The parent ran on the gpu worker; the child was taken off its queue by the cpu worker.
    expect(workers[0]!.output()).toMatch(new RegExp(`running run ${id} of DAG "fleet-parent"`));
    const child = /running run (\S+) of DAG "kid"/.exec(workers[1]!.output())?.[1];
    expect(child).toBeDefined();
    const log = await call('GET', `/dag-runs/fleet-parent/${id}/children/${child}/steps/where/log`);
    expect(log.body).toMatchObject({ content: 'kid-ran' });
  });

  it('exports workers by health, dispatch latency and queue depth as metrics', async () => {
    const res = await fetch(`${base}/metrics`);
    const text = await res.text();
    expect(text).toMatch(/^svc_workers\{health="healthy"\} 2$/m);
    expect(text).toMatch(/^svc_dispatch_latency_seconds_count [1-9]\d*$/m);
    expect(text).toMatch(/^svc_dispatch_queue_depth\{queue="gpu=true"\} 0$/m);
  });

  it("counts the workers' runs by DAG and outcome, children included", async () => {
    const f = await scrape();
    for (const dag of ['gpu-job', 'fleet-parent', 'kid']) {
      expect(sampleValue(f, 'svc_dag_runs_started_total', { dag }), dag).toBe(1);
      expect(sampleValue(f, 'svc_dag_runs_finished_total', { dag, status: 'success' }), dag).toBe(
        1,
      );
      expect(sampleValue(f, 'svc_dag_run_duration_seconds_count', { dag, status: 'success' })).toBe(
        1,
      );
    }
    expect(sampleValue(f, 'svc_dag_runs_total', { status: 'success' })).toBe(3);
  });

  it('shows each worker’s slots, busy slots and state, and a busy slot while it runs', async () => {
    const busyOf = (worker: string) => async () =>
      sampleValue(await scrape(), 'svc_worker_busy_slots', { worker });
    // the runs of the tests before (a child run's too) are over once each worker has said so
    for (const worker of ['e2e-gpu', 'e2e-cpu'])
      await expect.poll(busyOf(worker), { timeout: 15_000, interval: 50 }).toBe(0);
    let f = await scrape();
    expect(sampleValue(f, 'svc_coordinator_running')).toBe(1);
    for (const worker of ['e2e-gpu', 'e2e-cpu']) {
      expect(sampleValue(f, 'svc_worker_slots', { worker }), worker).toBe(2);
      expect(sampleValue(f, 'svc_worker_state', { worker, state: 'healthy' }), worker).toBe(1);
      expect(sampleValue(f, 'svc_worker_state', { worker, state: 'unhealthy' }), worker).toBe(0);
    }
    const spec = 'workerSelector:\n  gpu: "true"\nsteps:\n  - name: hold\n    command: sleep 30\n';
    expect((await call('POST', '/dags', { name: 'gpu-hold', spec })).status).toBe(201);
    const id = (await call('POST', '/dags/gpu-hold/start', {})).body.dagRunId as string;
    const busy = busyOf('e2e-gpu');
    await expect.poll(busy, { timeout: 15_000, interval: 50 }).toBe(1);
    f = await scrape();
    expect(sampleValue(f, 'svc_worker_busy_slots', { worker: 'e2e-cpu' })).toBe(0);
    // running once the worker's first report is recorded, a moment after it took the slot
    await expect
      .poll(async () => sampleValue(await scrape(), 'svc_dag_runs_currently_running'))
      .toBe(1);
    expect((await call('POST', `/dag-runs/gpu-hold/${id}/stop`)).status).toBe(200);
    expect(await untilFinal('gpu-hold', id)).toMatchObject({ status: 3 });
    await expect.poll(busy, { timeout: 15_000, interval: 50 }).toBe(0);
    f = await scrape();
    expect(
      sampleValue(f, 'svc_dag_runs_finished_total', { dag: 'gpu-hold', status: 'cancelled' }),
    ).toBe(1);
  });

  it('holds a named queue’s maxConcurrency across the whole fleet', async () => {
    const spec =
      'queue: fleetq\nworkerSelector:\n  region: any\nsteps:\n  - name: work\n    command: sleep 0.3\n';
    // Two more workers with region=any, room for 2 runs each: 4 free slots, cap 1.
    const whome = mkdtempSync(join(tmpdir(), 'trellis-e2e-worker-'));
    const extra = await Promise.all(
      ['e2e-any-1', 'e2e-any-2'].map((id) =>
        spawnWorker({
          id,
          labels: { region: 'any' },
          concurrency: 2,
          coordinator: `127.0.0.1:${grpcPort}`,
          redisUrl: redis.url,
          home: whome,
        }),
      ),
    );
    workers.push(...extra);
    expect((await call('POST', '/dags', { name: 'capped', spec })).status).toBe(201);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await call('POST', '/dags/capped/start', {})).body.dagRunId as string);
    let maxRunning = 0;
    for (let i = 0; i < 1500; i++) {
      const states = await Promise.all(
        ids.map(
          async (id) =>
            ((await call('GET', `/dag-runs/capped/${id}`)).body.dagRunDetails as { status: number })
              .status,
        ),
      );
      maxRunning = Math.max(maxRunning, states.filter((s) => s === 1).length);
      if (states.every((s) => s === 4)) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(maxRunning).toBe(1);
    for (const id of ids) expect((await untilFinal('capped', id)).status).toBe(4);
    await Promise.all(extra.map((w) => w.stop()));
  });

  it('stops a run executing on a worker through the API', async () => {
    const spec = 'workerSelector:\n  gpu: "false"\nsteps:\n  - name: wait\n    command: sleep 60\n';
    expect((await call('POST', '/dags', { name: 'cpu-long', spec })).status).toBe(201);
    const started = await call('POST', '/dags/cpu-long/start', {});
    const id = started.body.dagRunId as string;
    for (let i = 0; i < 500; i++) {
      const d = (await call('GET', `/dag-runs/cpu-long/${id}`)).body.dagRunDetails as {
        status: number;
      };
      if (d.status === 1) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect((await call('POST', `/dag-runs/cpu-long/${id}/stop`)).status).toBe(200);
    expect((await untilFinal('cpu-long', id)).status).toBe(3);
  });
});
