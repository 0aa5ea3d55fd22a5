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
import { callApi, startAll, untilFinal, type StartAll } from './support/start-all.js';
import { ACL_PASSWORDS, applyAclOfDocs, redisCli, redisUrlFor } from './support/redis-acl.js';

/**
 * Least privilege on Redis (issue 19 item 2): the coordinator and a worker each log in as their
 * own Redis ACL user (docs/security.md gives the rules), with a password in SVC_REDIS_URL. The
 * fleet runs with those users alone, and the worker's user cannot touch another queue's keys nor
 * run an administrative command.
 */

const COORD_PW = ACL_PASSWORDS['<coordinator-password>'];
const WORKER_PW = ACL_PASSWORDS['<worker-password>'];

let redis: PrivateRedis;
let home: string;
let server: StartAll;
let base: string;
let worker: WorkerProcess | undefined;

beforeAll(async () => {
  redis = await startRedis();
  applyAclOfDocs(redis.port); // the very lines docs/security.md gives operators
  home = mkdtempSync(join(tmpdir(), 'trellis-e2e-acl-'));
  const grpcPort = await freePort();
  server = await startAll(
    {
      PATH: '/usr/local/bin:/usr/bin:/bin',
      HOME: home,
      SVC_HOME: home,
      SVC_REDIS_URL: redisUrlFor(redis.url, 'trellis-coordinator', COORD_PW),
    },
    ['--coordinator-port', String(grpcPort)],
  );
  base = `${server.url}/api/v2`;
  worker = await spawnWorker({
    id: 'acl-worker',
    labels: { pool: 'ci' },
    coordinator: `127.0.0.1:${grpcPort}`,
    redisUrl: redisUrlFor(redis.url, 'trellis-worker-ci', WORKER_PW),
    home: mkdtempSync(join(tmpdir(), 'trellis-e2e-acl-worker-')),
  });
}, 60_000);

afterAll(async () => {
  await worker?.stop();
  await server?.stop();
  await redis?.stop();
  rmSync(home, { recursive: true, force: true });
}, 60_000);

describe('Redis ACL users for the coordinator and a worker', () => {
  it('runs a DAG on the worker with nothing but the two restricted users', async () => {
    const spec = 'workerSelector:\n  pool: ci\nsteps:\n  - name: hello\n    command: echo acl-ok\n';
    expect((await callApi(base, 'POST', '/dags', { name: 'acl-dag', spec })).status).toBe(201);
    const started = await callApi(base, 'POST', '/dags/acl-dag/start', {});
    expect(started.status).toBe(200);
    const id = started.body.dagRunId as string;
    const details = await untilFinal(base, 'acl-dag', id, {
      attempts: 1500,
      context: () => `${server.output()}\n--- worker ---\n${worker?.output() ?? ''}`,
    });
    expect(details.status).toBe(4);
    expect(worker?.output()).toContain('consuming dispatch queue pool=ci');
    // no permission error anywhere: the users allow everything the fleet does
    expect(server.output() + (worker?.output() ?? '')).not.toMatch(/NOPERM/);
  });

  it("refuses the worker's user another queue's keys and administrative commands", () => {
    const asWorker = (...args: string[]) =>
      redisCli(redis.port, 'trellis-worker-ci', WORKER_PW, args);
    expect(asWorker('SET', 'trellis:pool=ci:probe', '1')).toBe('OK'); // its own queue
    expect(asWorker('GET', 'trellis:gpu=true:meta')).toMatch(/^NOPERM/);
    expect(asWorker('DEL', 'trellis:gpu=true:wait')).toMatch(/^NOPERM/);
    expect(asWorker('GET', 'other-app:secret')).toMatch(/^NOPERM/);
    expect(asWorker('FLUSHALL')).toMatch(/^NOPERM/);
    expect(asWorker('CONFIG', 'GET', 'dir')).toMatch(/^NOPERM/);
    expect(asWorker('KEYS', '*')).toMatch(/^NOPERM/);
  });

  it('refuses a wrong password, and the coordinator user administrative commands', () => {
    expect(redisCli(redis.port, 'trellis-worker-ci', 'not-it', ['PING'])).toMatch(/WRONGPASS/);
    const asCoordinator = (...args: string[]) =>
      redisCli(redis.port, 'trellis-coordinator', COORD_PW, args);
    expect(asCoordinator('GET', 'trellis:gpu=true:meta')).toBe('');
    expect(asCoordinator('FLUSHALL')).toMatch(/^NOPERM/);
    expect(asCoordinator('GET', 'other-app:secret')).toMatch(/^NOPERM/);
  });
});
