import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, spawnWorker, type WorkerProcess } from '@trellis/dispatch/testing';
import { callApi, startAll, untilFinal, type StartAll } from './support/start-all.js';
import { startTlsRedis, type TlsRedis } from './support/redis-tls.js';

/**
 * Redis over TLS with a password (issue 19 item 2): a redis-server serving only TLS, its
 * certificate signed by a private CA the processes trust through NODE_EXTRA_CA_CERTS (as
 * docs/security.md says); `start-all` and a worker reach it with a `rediss://` SVC_REDIS_URL and a
 * run goes through the fleet.
 */

const PASSWORD = 'tls-s3cret/with:odd@chars';

let redis: TlsRedis;
let home: string;
let server: StartAll;
let worker: WorkerProcess | undefined;

beforeAll(async () => {
  redis = await startTlsRedis(PASSWORD);
  home = mkdtempSync(join(tmpdir(), 'trellis-e2e-redis-tls-'));
  const grpcPort = await freePort();
  const env = { NODE_EXTRA_CA_CERTS: redis.caFile };
  server = await startAll(
    {
      PATH: '/usr/local/bin:/usr/bin:/bin',
      HOME: home,
      SVC_HOME: home,
      SVC_REDIS_URL: redis.url,
      ...env,
    },
    ['--coordinator-port', String(grpcPort)],
  );
  worker = await spawnWorker({
    id: 'tls-worker',
    labels: { pool: 'tls' },
    coordinator: `127.0.0.1:${grpcPort}`,
    redisUrl: redis.url,
    home: mkdtempSync(join(tmpdir(), 'trellis-e2e-redis-tls-worker-')),
    env,
  });
}, 60_000);

afterAll(async () => {
  await worker?.stop();
  await server?.stop();
  await redis?.stop();
  rmSync(home, { recursive: true, force: true });
}, 60_000);

describe('Redis over TLS with a password', () => {
  it('carries a run from start-all to a worker through a rediss:// URL', async () => {
    const base = `${server.url}/api/v2`;
    const spec =
      'workerSelector:\n  pool: tls\nsteps:\n  - name: hello\n    command: echo over-tls\n';
    expect((await callApi(base, 'POST', '/dags', { name: 'tls-dag', spec })).status).toBe(201);
    const started = await callApi(base, 'POST', '/dags/tls-dag/start', {});
    expect(started.status).toBe(200);
    const details = await untilFinal(base, 'tls-dag', started.body.dagRunId as string, {
      attempts: 1500,
      context: () => `${server.output()}\n--- worker ---\n${worker?.output() ?? ''}`,
    });
    expect(details.status).toBe(4);
    expect(worker?.output()).toContain('consuming dispatch queue pool=tls');
    // the password never shows in what either process prints
    expect(server.output() + (worker?.output() ?? '')).not.toContain('s3cret');
  });
});
