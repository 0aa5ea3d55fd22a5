import { mkdtempSync, rmSync } from 'node:fs';
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
import { listWorkers, runCli, untilWorkers } from './support/fleet.js';
import { callApi, startAll, untilFinal, type StartAll } from './support/start-all.js';

/**
 * Issue 19, mutual TLS between real processes: `trellis start-all` with a server certificate and
 * a client CA, all made by `trellis certs`; a worker with its own client certificate is admitted
 * and runs work, one without a client certificate and one with a certificate of another CA are
 * refused, each saying on its log what to change. Outcomes are read from GET /workers and logs.
 */

const ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };
let redis: PrivateRedis;
let dir: string;
let server: StartAll;
let base: string;
let grpcPort: number;
const workers: WorkerProcess[] = [];

const tls = (...parts: string[]): string => join(dir, ...parts);

/** A worker dialing the coordinator with `env`'s TLS settings. */
const worker = async (id: string, env: Record<string, string>, noWait = false) => {
  const w = await spawnWorker({
    id,
    labels: { pool: 'mtls' },
    coordinator: `localhost:${grpcPort}`,
    redisUrl: redis.url,
    concurrency: 1,
    home: tls('worker-home'),
    env,
    noWait,
  });
  workers.push(w);
  return w;
};

const certs = async (out: string, args: string[]): Promise<void> => {
  const r = await runCli(['certs', '--out', out, ...args], ENV);
  expect(r.code, r.out).toBe(0);
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-e2e-mtls-'));
  redis = await startRedis();
  await certs(tls('pki'), ['--host', 'localhost,127.0.0.1', '--worker', 'good,stranger']);
  await certs(tls('other-pki'), ['--host', 'localhost', '--worker', 'stranger']);
  grpcPort = await freePort();
  server = await startAll(
    {
      ...ENV,
      HOME: tls('home'),
      SVC_HOME: tls('home'),
      SVC_REDIS_URL: redis.url,
      SVC_COORDINATOR_TLS_CERT_FILE: tls('pki', 'coordinator.pem'),
      SVC_COORDINATOR_TLS_KEY_FILE: tls('pki', 'coordinator-key.pem'),
      SVC_COORDINATOR_TLS_CA_FILE: tls('pki', 'ca.pem'),
    },
    ['--coordinator-port', String(grpcPort)],
  );
  base = `${server.url}/api/v2`;
  await server.waitFor('mutual TLS');
  const spec =
    'workerSelector:\n  pool: mtls\nsteps:\n  - name: s\n    command: echo "ran $DAG_RUN_ID"\n';
  expect((await callApi(base, 'POST', '/dags', { name: 'hello', spec })).status).toBe(201);
}, 180_000);

afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await server?.stop();
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 120_000);

describe('mutual TLS between the coordinator and workers', { timeout: 180_000 }, () => {
  it('admits a worker with its own client certificate, which runs work', async () => {
    const good = await worker('good', {
      SVC_WORKER_TLS_CERT_FILE: tls('pki', 'worker-good.pem'),
      SVC_WORKER_TLS_KEY_FILE: tls('pki', 'worker-good-key.pem'),
      SVC_WORKER_TLS_CA_FILE: tls('pki', 'ca.pem'),
    });
    await good.waitFor('connected to the coordinator as "good"');
    await untilWorkers(base, (ws) => ws.some((w) => w.id === 'good'), 'good');
    const r = await callApi(base, 'POST', '/dags/hello/start', {});
    expect(r.status).toBe(200);
    const id = r.body.dagRunId as string;
    expect(await untilFinal(base, 'hello', id, { attempts: 6000 })).toMatchObject({ status: 4 });
    expect(good.output()).toContain(`running run ${id}`);
  });

  it('refuses a worker without a client certificate, naming the settings to add', async () => {
    const bare = await worker('bare', { SVC_WORKER_TLS_CA_FILE: tls('pki', 'ca.pem') }, true);
    await bare.waitFor(/coordinator unreachable \(.*requires a client certificate/);
    expect(bare.output()).toContain('SVC_WORKER_TLS_CERT_FILE');
    expect(bare.output()).toContain('trellis certs');
    expect(bare.output()).not.toContain('connected to the coordinator');
    expect((await listWorkers(base)).map((w) => w.id)).toEqual(['good']);
  });

  it('refuses a worker whose client certificate another CA signed', async () => {
    const stranger = await worker(
      'stranger',
      {
        SVC_WORKER_TLS_CERT_FILE: tls('other-pki', 'worker-stranger.pem'),
        SVC_WORKER_TLS_KEY_FILE: tls('other-pki', 'worker-stranger-key.pem'),
        SVC_WORKER_TLS_CA_FILE: tls('pki', 'ca.pem'),
      },
      true,
    );
    await stranger.waitFor(/coordinator unreachable \(.*signed by the coordinator's CA/);
    expect(stranger.output()).not.toContain('connected to the coordinator');
    expect((await listWorkers(base)).map((w) => w.id)).toEqual(['good']);
  });

  it('refuses a worker speaking plain gRPC', async () => {
    const plain = await worker('plain', {}, true);
    await plain.waitFor(/coordinator unreachable \(.*if the coordinator uses TLS/);
    expect(plain.output()).toContain('SVC_WORKER_TLS_CA_FILE');
    expect(plain.output()).not.toContain('connected to the coordinator');
    expect((await listWorkers(base)).map((w) => w.id)).toEqual(['good']);
  });
});
