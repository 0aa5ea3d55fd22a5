import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  freePort,
  spawnWorker,
  startRedis,
  type PrivateRedis,
  type WorkerProcess,
} from '@trellis/dispatch/testing';
import { callApi, startAll, type StartAll } from '../e2e/support/start-all.js';
import { expectNothingLost, Ledger, untilAllFinal } from './support/ledger.js';

/**
 * Faults of the fleet (`trellis start-all` with a private Redis, `trellis worker` processes):
 * a worker killed mid-step, a worker drained with SIGTERM, the coordinator killed and restarted,
 * Redis killed and restarted with and without its data. After each, every accepted run is final,
 * none ran twice, and a failed run's error names the cause.
 */

let home: string;
let whome: string;
let redis: PrivateRedis;
let grpcPort: number;
let ledger: Ledger;
let server: StartAll | undefined;
const workers: WorkerProcess[] = [];

const base = (): string => `${server!.url}/api/v2`;
const context = (): string =>
  [server?.output() ?? '', ...workers.map((w) => `--- ${w.id}\n${w.output()}`)].join('\n');

const startServer = async (): Promise<void> => {
  server = await startAll(
    { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, SVC_HOME: home, SVC_REDIS_URL: redis.url },
    ['--coordinator-port', String(grpcPort)],
  );
};

const killServer = async (): Promise<void> => {
  server!.proc.kill('SIGKILL');
  await once(server!.proc, 'exit');
};

const worker = async (id: string, concurrency = 1): Promise<WorkerProcess> => {
  const w = await spawnWorker({
    id,
    labels: { role: 'fault' },
    coordinator: `127.0.0.1:${grpcPort}`,
    redisUrl: redis.url,
    concurrency,
    graceSec: 60,
    home: whome,
  });
  workers.push(w);
  return w;
};

/** Enqueues `n` runs of the ledger DAG (every step waits for the gate), in order. */
const enqueue = async (n: number): Promise<string[]> => {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await callApi(base(), 'POST', '/dags/ledger/enqueue', {});
    expect(r.status).toBe(200);
    ids.push(r.body.dagRunId as string);
  }
  return ids;
};

const allFinal = (ids: readonly string[]) => untilAllFinal(base, 'ledger', ids, context);

beforeEach(async () => {
  home = mkdtempSync(join(tmpdir(), 'trellis-faults-fleet-'));
  whome = mkdtempSync(join(tmpdir(), 'trellis-faults-worker-'));
  redis = await startRedis();
  grpcPort = await freePort();
  ledger = new Ledger(home);
  await startServer();
  const spec = ledger.dag({
    gated: true,
    extra: ['maxActiveRuns: 3', 'workerSelector:', '  role: fault'],
  });
  expect((await callApi(base(), 'POST', '/dags', { name: 'ledger', spec })).status).toBe(201);
}, 60_000);

afterEach(async () => {
  ledger.release();
  ledger.dispose();
  const alive = workers.splice(0).filter((w) => w.proc.exitCode === null && !w.proc.signalCode);
  await Promise.all(alive.map((w) => (w.kill('SIGKILL'), once(w.proc, 'exit'))));
  if (server && server.proc.exitCode === null && server.proc.signalCode === null)
    await killServer();
  await redis.stop();
  rmSync(home, { recursive: true, force: true, maxRetries: 5 });
  rmSync(whome, { recursive: true, force: true, maxRetries: 5 });
}, 60_000);

describe('faults of the fleet', { timeout: 120_000 }, () => {
  it('kill -9 of a worker mid-step: its run fails naming the worker, the others run once elsewhere', async () => {
    const doomed = await worker('doomed');
    await worker('steady');
    const ids = await enqueue(3);
    await ledger.untilLines(2); // one run on each worker; the third waits for a slot
    const onDoomed = ledger.lines().find((id) => doomed.output().includes(id));
    expect(onDoomed).toBeDefined();
    doomed.kill('SIGKILL');
    await once(doomed.proc, 'exit');
    ledger.release();
    const runs = await allFinal(ids);
    expectNothingLost(ledger, runs, /worker "doomed" was lost/);
    expect(runs.filter((r) => r.status === 2).map((r) => r.dagRunId)).toEqual([onDoomed]);
    expect(runs.filter((r) => r.status === 4)).toHaveLength(2);
  });

  it('SIGTERM drain of a worker: its running run finishes there, the queued ones go to another worker', async () => {
    const leaving = await worker('leaving');
    const ids = await enqueue(3);
    await ledger.untilLines(1);
    const exited = once(leaving.proc, 'exit');
    leaving.kill('SIGTERM');
    await leaving.waitFor(/SIGTERM/);
    await worker('arriving');
    ledger.release();
    const [code] = (await exited) as [number | null];
    expect(code).toBe(0);
    const runs = await allFinal(ids);
    expectNothingLost(ledger, runs);
    expect(runs.map((r) => r.status)).toEqual([4, 4, 4]);
    expect(leaving.output()).toContain(ids[0]);
  });

  it('kill -9 of the coordinator: the worker keeps its run, the restarted coordinator finishes every run once', async () => {
    await worker('keeper');
    const ids = await enqueue(3);
    await ledger.untilLines(1);
    await killServer();
    ledger.release();
    await startServer();
    const runs = await allFinal(ids);
    expectNothingLost(ledger, runs);
    expect(runs.map((r) => r.status)).toEqual([4, 4, 4]);
  });

  for (const wipe of [false, true]) {
    it(`kill -9 of Redis ${wipe ? 'losing its data' : 'keeping its data'} under running runs: every run, and the runs after it, finish once`, async () => {
      await worker('patient', 3);
      const ids = await enqueue(3);
      await ledger.untilLines(3); // all three claimed and running on the worker
      await redis.restart({ wipe });
      ledger.release();
      ids.push(...(await enqueue(2)));
      const runs = await allFinal(ids);
      expectNothingLost(ledger, runs);
      expect(runs.map((r) => r.status)).toEqual([4, 4, 4, 4, 4]);
    });
  }
});
