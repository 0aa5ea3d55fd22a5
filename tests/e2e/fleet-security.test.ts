import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
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
import {
  listWorkers as listWorkersOf,
  runCli,
  untilWorkers as untilWorkersOf,
  type ListedWorker,
} from './support/fleet.js';
import { callApi, startAll, untilFinal, type StartAll } from './support/start-all.js';

/**
 * Issue 19 items 1 and 5 with real processes: `trellis start-all` accepting two worker tokens (a
 * rotation), workers with the old, the new, a wrong and no token; cordon and drain of a worker
 * with a run in flight through `trellis worker cordon|drain`; SIGTERM shows draining at once
 * and the worker leaves GET /workers when it exits; a non-loopback bind refused; `trellis certs`
 * checked with the real openssl.
 */

let redis: PrivateRedis;
let home: string;
let whome: string;
let server: StartAll;
let base: string;
let grpcPort: number;
const workers = new Map<string, WorkerProcess>();
const ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };

const call = (method: string, path: string, body?: unknown) => callApi(base, method, path, body);

const listWorkers = () => listWorkersOf(base);
/** Polls GET /workers until `ok` holds (20 ms apart, 10 s at most). */
const untilWorkers = (ok: (ws: ListedWorker[]) => boolean, what: string) =>
  untilWorkersOf(base, ok, what, 500);

const spawnTokenWorker = (id: string, token: string | undefined, noWait = false) =>
  spawnWorker({
    id,
    labels: { pool: 'sec' },
    coordinator: `127.0.0.1:${grpcPort}`,
    redisUrl: redis.url,
    concurrency: 1,
    graceSec: 30,
    home: whome,
    env: token === undefined ? {} : { SVC_WORKER_TOKEN: token },
    noWait,
  });

const cli = (args: string[], env: NodeJS.ProcessEnv = ENV) => runCli(args, env);

/** Starts a run of `dag` and resolves with its id and the worker that runs it. */
const startOn = async (dag: string): Promise<{ id: string; worker: string }> => {
  const r = await call('POST', `/dags/${dag}/start`, {});
  expect(r.status).toBe(200);
  const id = r.body.dagRunId as string;
  const worker = await Promise.race(
    [...workers.values()].map((w) => w.waitFor(`running run ${id}`).then(() => w.id)),
  );
  return { id, worker };
};

beforeAll(async () => {
  redis = await startRedis();
  home = mkdtempSync(join(tmpdir(), 'trellis-e2e-sec-'));
  whome = mkdtempSync(join(tmpdir(), 'trellis-e2e-sec-worker-'));
  grpcPort = await freePort();
  server = await startAll(
    {
      ...ENV,
      HOME: home,
      SVC_HOME: home,
      SVC_REDIS_URL: redis.url,
      SVC_COORDINATOR_TOKENS: 'old-token,new-token',
    },
    ['--coordinator-port', String(grpcPort)],
  );
  base = `${server.url}/api/v2`;
  for (const [id, token] of [
    ['w-old', 'old-token'],
    ['w-new', 'new-token'],
  ] as const)
    workers.set(id, await spawnTokenWorker(id, token));
  const selector = 'workerSelector:\n  pool: sec\n';
  for (const [name, cmd] of [
    ['slow', 'sleep 3'],
    ['quick', 'echo quick'],
  ])
    expect(
      (
        await call('POST', '/dags', {
          name,
          spec: `${selector}steps:\n  - name: s\n    command: ${cmd}\n`,
        })
      ).status,
    ).toBe(201);
}, 60_000);

afterAll(async () => {
  await Promise.all([...workers.values()].map((w) => w.stop()));
  await server.stop();
  await redis.stop();
  rmSync(home, { recursive: true, force: true });
  rmSync(whome, { recursive: true, force: true });
}, 60_000);

describe('worker tokens between real processes', { timeout: 60_000 }, () => {
  it('admits workers with the old and the new token (rotation), with their lifecycle fields', async () => {
    const ws = await untilWorkers((l) => l.length === 2, 'both workers');
    expect(ws.map((w) => w.id)).toEqual(['w-new', 'w-old']);
    expect(ws[0]).toMatchObject({ state: 'active', slots_total: 1, slots_busy: 0 });
    expect(ws[0]!.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(ws[0]!.host).not.toBe('');
    expect(ws[0]!.started_at).toMatch(/^\d{4}-/);
  });

  it('refuses a wrong and a missing token with the fix, logged once on the coordinator', async () => {
    const wrong = await spawnTokenWorker('w-wrong', 'guess', true);
    const none = await spawnTokenWorker('w-none', undefined, true);
    await wrong.waitFor(/the coordinator refused this worker: .*not one this coordinator accepts/);
    await none.waitFor(/the coordinator refused this worker: .*none was sent/);
    expect(wrong.output()).toContain('SVC_WORKER_TOKEN');
    await server.waitFor('refused worker "w-wrong"');
    await server.waitFor('refused worker "w-none"');
    expect((await listWorkers()).map((w) => w.id)).toEqual(['w-new', 'w-old']);
    await Promise.all([wrong.stop(), none.stop()]);
    expect(server.output().split('refused worker "w-wrong"')).toHaveLength(2);
  });
});

describe('cordon, drain and SIGTERM', { timeout: 60_000 }, () => {
  it('cordon: the run in flight finishes, new runs go to the other worker; uncordon', async () => {
    const first = await startOn('slow');
    const other = first.worker === 'w-old' ? 'w-new' : 'w-old';
    const c = await cli(['worker', 'cordon', first.worker, '--server', server.url]);
    expect(c.out).toContain(`worker ${first.worker} is cordoned`);
    expect(c.code).toBe(0);
    const quick = await startOn('quick');
    expect(quick.worker).toBe(other);
    expect(await untilFinal(base, 'slow', first.id)).toMatchObject({ status: 4 });
    expect(await untilFinal(base, 'quick', quick.id)).toMatchObject({ status: 4 });
    const ws = await listWorkers();
    expect(ws.find((w) => w.id === first.worker)?.state).toBe('cordoned');
    const u = await cli(['worker', 'uncordon', first.worker, '--server', server.url]);
    expect(u.code).toBe(0);
    await untilWorkers((l) => l.every((w) => w.state === 'active'), 'both active');
    const unknown = await cli(['worker', 'cordon', 'nobody', '--server', server.url]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.out).toContain('"nobody" is known to no coordinator');
  });

  it('drain: the worker finishes its run, exits and leaves GET /workers', async () => {
    const run = await startOn('slow');
    const d = await cli(['worker', 'drain', run.worker, '--server', server.url]);
    expect(d.code).toBe(0);
    expect(d.out).toContain(`worker ${run.worker} is draining`);
    const proc = workers.get(run.worker)!.proc;
    // it may have exited already (its run ended while the CLI ran)
    const code = proc.exitCode ?? ((await once(proc, 'exit')) as [number | null])[0];
    expect(code).toBe(0);
    expect(await untilFinal(base, 'slow', run.id)).toMatchObject({ status: 4 });
    await untilWorkers((l) => !l.some((w) => w.id === run.worker), `${run.worker} gone`);
    workers.delete(run.worker);
  });

  it('SIGTERM: draining at once, then gone when it exits (no ghost)', async () => {
    const run = await startOn('slow');
    const proc = workers.get(run.worker)!;
    proc.kill('SIGTERM');
    await untilWorkers(
      (l) => l.find((w) => w.id === run.worker)?.state === 'draining',
      `${run.worker} draining`,
    );
    await once(proc.proc, 'exit');
    expect(await untilFinal(base, 'slow', run.id)).toMatchObject({ status: 4 });
    await untilWorkers((l) => !l.some((w) => w.id === run.worker), `${run.worker} gone`);
    workers.delete(run.worker);
  });
});

describe('exposure', { timeout: 60_000 }, () => {
  it('refuses to listen beyond loopback without TLS or tokens, saying why', async () => {
    const port = await freePort();
    const h = mkdtempSync(join(tmpdir(), 'trellis-e2e-bind-'));
    const env = { ...ENV, HOME: h, SVC_HOME: h, SVC_REDIS_URL: redis.url };
    const r = await cli(
      ['coordinator', '--coordinator-host', '0.0.0.0', '--coordinator-port', String(port)],
      env,
    );
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/refusing to listen on 0\.0\.0\.0:\d+ without TLS or worker tokens/);
    expect(r.out).toContain('--insecure');
    rmSync(h, { recursive: true, force: true });
  });

  it('trellis certs makes a CA, a server and a client certificate that openssl verifies', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trellis-e2e-certs-'));
    const r = await cli(['certs', '--out', dir, '--host', 'localhost,127.0.0.1', '--worker', 'w1']);
    expect(r.code).toBe(0);
    const ossl = (...args: string[]) => execFileSync('openssl', args, { encoding: 'utf8' });
    expect(ossl('verify', '-CAfile', join(dir, 'ca.pem'), join(dir, 'coordinator.pem'))).toContain(
      'OK',
    );
    expect(ossl('verify', '-CAfile', join(dir, 'ca.pem'), join(dir, 'worker-w1.pem'))).toContain(
      'OK',
    );
    const san = ossl(
      'x509',
      '-in',
      join(dir, 'coordinator.pem'),
      '-noout',
      '-ext',
      'subjectAltName,extendedKeyUsage',
    );
    expect(san).toMatch(/DNS:localhost, IP Address:127\.0\.0\.1/);
    expect(san).toContain('TLS Web Server Authentication');
    expect(statSync(join(dir, 'worker-w1-key.pem')).mode & 0o777).toBe(0o600);
    // a second run keeps the CA and refuses to overwrite a key
    const again = await cli(['certs', '--out', dir, '--worker', 'w1']);
    expect(again.code).not.toBe(0);
    expect(again.out).toContain('worker-w1.pem exists');
    rmSync(dir, { recursive: true, force: true });
  });
});
