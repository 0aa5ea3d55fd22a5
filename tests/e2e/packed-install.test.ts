import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  freePort,
  spawnWorker,
  startRedis,
  type PrivateRedis,
  type WorkerProcess,
} from '@trellis/dispatch/testing';
import { packAndInstall, type PackedInstall } from './support/packed-install.js';
import { callApi, ROOT, startAll, untilFinal, type StartAll } from './support/start-all.js';

/**
 * The packed `trellis` tarball (issue 19, item 6): `pnpm package` builds it, npm installs it
 * into an empty prefix without a registry, and the installed command works from a folder outside
 * the repository with a private HOME and SVC_HOME, loading nothing of the repository.
 */

const run = promisify(execFile);
const VERSION = (
  JSON.parse(readFileSync(join(ROOT, 'packages/cli/package.json'), 'utf8')) as { version: string }
).version;

let installed: PackedInstall;
let server: StartAll;
let base: string;

const envFor = (home: string, more: Record<string, string> = {}) => ({
  PATH: installed.PATH,
  HOME: home,
  SVC_HOME: home,
  ...more,
});

const trellis = (args: string[]) =>
  run(installed.bin, args, { cwd: installed.cwd, env: envFor(join(installed.dir, 'home')) });

beforeAll(async () => {
  installed = await packAndInstall();
  const home = join(installed.dir, 'svc-home');
  server = await startAll(envFor(home), [], { file: installed.bin, cwd: installed.cwd });
  base = `${server.url}/api/v2`;
}, 180_000);

afterAll(async () => {
  await server?.stop();
  if (installed) rmSync(installed.dir, { recursive: true, force: true });
});

const call = (method: string, path: string, body?: unknown) => callApi(base, method, path, body);

describe('the packed trellis tarball, installed with npm into an empty prefix', () => {
  it('installs a self-contained package: the bundle and its assets, jq-wasm its only module', () => {
    expect(realpathSync(installed.bin)).toBe(join(installed.pkgDir, 'dist', 'trellis.js'));
    expect(readdirSync(join(installed.pkgDir, 'node_modules'))).toEqual(['jq-wasm']);
    const pkg = JSON.parse(readFileSync(join(installed.pkgDir, 'package.json'), 'utf8')) as {
      name: string;
      version: string;
      bin: Record<string, string>;
    };
    expect(pkg).toMatchObject({
      name: 'trellis',
      version: VERSION,
      bin: { trellis: 'dist/trellis.js' },
    });
    expect(installed.tarball).toMatch(
      new RegExp(`trellis-${VERSION.replaceAll('.', '\\.')}\\.tgz$`),
    );
  });

  it('prints its version and its commands', async () => {
    expect((await trellis(['--version'])).stdout.trim()).toBe(VERSION);
    const help = (await trellis(['--help'])).stdout;
    expect(help).toContain(`trellis ${VERSION}`);
    for (const command of ['start-all', 'server', 'worker', 'coordinator', 'validate'])
      expect(help).toMatch(new RegExp(`^  ${command} `, 'm'));
  });

  it('serves health from start-all', async () => {
    const r = await call('GET', '/health');
    expect(r).toMatchObject({ status: 200, body: { status: 'healthy', version: VERSION } });
  });

  it('runs a DAG started over the API to success, with readable logs (jq-wasm included)', async () => {
    const spec = [
      'steps:',
      '  - name: greet',
      '    command: echo "hello from the tarball"',
      '  - name: pick',
      '    executor: jq',
      '    command: .a',
      '    script: \'{"a": 42}\'',
      '',
    ].join('\n');
    expect((await call('POST', '/dags', { name: 'packed', spec })).status).toBe(201);
    const started = await call('POST', '/dags/packed/start', {});
    expect(started.status).toBe(200);
    const id = started.body.dagRunId as string;
    const done = await untilFinal(base, 'packed', id, { context: () => server.output() });
    expect(done).toMatchObject({ status: 4, statusLabel: 'finished' });
    const greet = await call('GET', `/dag-runs/packed/${id}/steps/greet/log`);
    expect(greet.body).toMatchObject({ content: 'hello from the tarball' });
    const pick = await call('GET', `/dag-runs/packed/${id}/steps/pick/log`);
    expect(pick.body).toMatchObject({ content: '42' });
  });

  it('serves the web UI and its assets', async () => {
    const res = await fetch(`${server.url}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await res.text();
    expect(html).toContain('window.__TRELLIS__');
    const script = /src="\.?\/?(assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(`${server.url}/${script}`);
    expect(asset.status).toBe(200);
    expect((await asset.text()).length).toBeGreaterThan(1000);
  });
});

describe('the installed trellis as a fleet: start-all with Redis and a worker', () => {
  let redis: PrivateRedis;
  let fleet: StartAll;
  let worker: WorkerProcess;

  beforeAll(async () => {
    redis = await startRedis();
    const grpcPort = await freePort();
    const home = join(installed.dir, 'fleet-home');
    fleet = await startAll(
      envFor(home, { SVC_REDIS_URL: redis.url }),
      ['--coordinator-port', String(grpcPort)],
      { file: installed.bin, cwd: installed.cwd },
    );
    const whome = join(installed.dir, 'worker-home');
    worker = await spawnWorker({
      id: 'packed-worker',
      labels: { packed: 'true' },
      coordinator: `127.0.0.1:${grpcPort}`,
      redisUrl: redis.url,
      home: whome,
      env: { PATH: installed.PATH },
      bin: { file: installed.bin, cwd: installed.cwd },
    });
  }, 60_000);

  afterAll(async () => {
    await worker?.stop();
    await fleet?.stop();
    await redis?.stop();
  }, 60_000);

  it('runs a DAG on the worker its workerSelector names', async () => {
    const fleetBase = `${fleet.url}/api/v2`;
    const spec =
      'workerSelector:\n  packed: "true"\nsteps:\n  - name: where\n    command: echo on-worker\n';
    expect((await callApi(fleetBase, 'POST', '/dags', { name: 'remote', spec })).status).toBe(201);
    const started = await callApi(fleetBase, 'POST', '/dags/remote/start', {});
    const id = started.body.dagRunId as string;
    const done = await untilFinal(fleetBase, 'remote', id, {
      attempts: 1500,
      context: () => `${fleet.output()}\n${worker.output()}`,
    });
    expect(done).toMatchObject({ status: 4 });
    const log = await callApi(fleetBase, 'GET', `/dag-runs/remote/${id}/steps/where/log`);
    expect(log.body).toMatchObject({ content: 'on-worker' });
    expect(worker.output()).toMatch(new RegExp(`running run ${id}`));
  });
});
