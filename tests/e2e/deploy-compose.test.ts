import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '@trellis/dispatch/testing';
import { callApi, untilFinal } from './support/start-all.js';
import {
  composeCommand,
  docker,
  health,
  requireBaseImages,
  run,
  trellisImage,
  until,
} from './support/docker-cli.js';

/**
 * docker-compose.yml (issue 19, item 6; issue 20, item 7): one image for every Trellis service,
 * Redis with a password (local/trellis-redis:7), PostgreSQL (local/trellis-postgres:15), two
 * coordinators on it (both serve the API, one is the leader) and two labelled workers with a
 * token each and both coordinators' addresses, started in order of their health checks; a run
 * goes to the worker its workerSelector names. The commands are docs/operations.md's ("Install
 * with Docker Compose").
 */

const project = `trellis-e2e-${randomBytes(4).toString('hex')}`;
const secret = () => randomBytes(16).toString('hex');
let compose: readonly string[];
let env: NodeJS.ProcessEnv;
let base: string;
let base2: string;

const composeRun = (...args: string[]) =>
  run(compose[0] ?? 'docker', [...compose.slice(1), '-p', project, ...args], {
    env,
    timeoutMs: 300_000,
  });

/** A service's container, by the labels compose (v1 and v2) puts on it: no compose start-up. */
const containerOf = (service: string): Promise<string> =>
  docker(
    'ps',
    '-q',
    '--filter',
    `label=com.docker.compose.project=${project}`,
    '--filter',
    `label=com.docker.compose.service=${service}`,
  );

const logsOf = async (service: string): Promise<string> => {
  const r = await run('docker', ['logs', await containerOf(service)]);
  return `${r.stdout}${r.stderr}`;
};

const fleetLogs = async (): Promise<string> => {
  const r = await composeRun('logs', '--no-color', '--tail', '40');
  return `${r.stdout}${r.stderr}`;
};

beforeAll(async () => {
  await requireBaseImages();
  compose = await composeCommand();
  const port = await freePort();
  const port2 = await freePort();
  env = {
    PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    HOME: tmpdir(),
    TRELLIS_IMAGE: await trellisImage(),
    TRELLIS_HTTP_PORT: String(port),
    TRELLIS_HTTP_PORT_2: String(port2),
    TRELLIS_POSTGRES_PASSWORD: secret(),
    TRELLIS_REDIS_PASSWORD: secret(),
    TRELLIS_GPU_WORKER_TOKEN: secret(),
    TRELLIS_CPU_WORKER_TOKEN: secret(),
  };
  base = `http://127.0.0.1:${port}/api/v2`;
  base2 = `http://127.0.0.1:${port2}/api/v2`;
  const up = await composeRun('up', '-d', '--no-build');
  if (up.code !== 0) throw new Error(`compose up failed:\n${up.stderr}\n${await fleetLogs()}`);
}, 600_000);

afterAll(async () => {
  if (env) await composeRun('down', '-v', '--remove-orphans');
}, 120_000);

describe('the compose fleet', { timeout: 180_000 }, () => {
  it('builds no image per service: every Trellis service runs the one named image', async () => {
    const images = await Promise.all(
      ['coordinator', 'coordinator-2', 'worker-gpu', 'worker-cpu'].map(async (s) =>
        docker('inspect', '-f', '{{.Config.Image}}', await containerOf(s)),
      ),
    );
    expect(images).toEqual(Array(4).fill(env.TRELLIS_IMAGE));
    const redis = await docker('inspect', '-f', '{{.Config.Image}}', await containerOf('redis'));
    expect(redis).toBe('local/trellis-redis:7');
    const pg = await docker('inspect', '-f', '{{.Config.Image}}', await containerOf('postgres'));
    expect(pg).toBe('local/trellis-postgres:15');
  });

  it('brings every service to healthy, the workers listed with their labels', async () => {
    for (const service of [
      'postgres',
      'redis',
      'coordinator',
      'coordinator-2',
      'worker-gpu',
      'worker-cpu',
    ]) {
      const id = await containerOf(service);
      await until(
        `${service} becoming healthy`,
        async () => ((await health(id)) === 'healthy' ? true : undefined),
        fleetLogs,
      );
    }
    // each worker is healthy at the coordinator it uses (either: both are given to it)
    type Listed = { id: string; labels: unknown; state: string; health_status: string };
    const listed: Listed[] = [];
    for (const b of [base, base2]) {
      const r = await callApi(b, 'GET', '/workers');
      expect(r.status).toBe(200);
      listed.push(...(r.body.workers as Listed[]));
    }
    const workers = listed
      .filter((w) => w.health_status === 'WORKER_HEALTH_STATUS_HEALTHY')
      .filter((w, i, all) => all.findIndex((x) => x.id === w.id) === i)
      .map((w) => ({ id: w.id, labels: w.labels, state: w.state }))
      .sort((x, y) => x.id.localeCompare(y.id));
    expect(workers).toEqual([
      { id: 'worker-cpu', labels: { gpu: 'false', region: 'eu' }, state: 'active' },
      { id: 'worker-gpu', labels: { gpu: 'true', region: 'eu' }, state: 'active' },
    ]);
  });

  it('serves the API from both coordinators on the one database, one of them the leader', async () => {
    const roles = await Promise.all(
      [base, base2].map(async (b) => {
        const r = await callApi(b, 'GET', '/health');
        expect(r.status).toBe(200);
        return r.body.role;
      }),
    );
    expect([...roles].sort()).toEqual(['follower', 'leader']);
    // a DAG written through one is run through the other (the DAGs volume, the one store)
    const spec = 'steps:\n  - name: s\n    command: echo shared\n';
    expect((await callApi(base, 'POST', '/dags', { name: 'shared', spec })).status).toBe(201);
    const started = await callApi(base2, 'POST', '/dags/shared/start', {});
    expect(started.status).toBe(200);
    const id = started.body.dagRunId as string;
    expect(await untilFinal(base, 'shared', id, { attempts: 3000 })).toMatchObject({ status: 4 });
  });

  it('has Redis refuse a client without the password', async () => {
    const redis = await containerOf('redis');
    const bare = await run('docker', [
      'exec',
      redis,
      'env',
      '-u',
      'REDISCLI_AUTH',
      'redis-cli',
      'ping',
    ]);
    expect(`${bare.stdout}${bare.stderr}`).toMatch(/NOAUTH Authentication required/);
    expect(await docker('exec', redis, 'redis-cli', 'ping')).toBe('PONG');
  });

  it('routes a run by its workerSelector to the gpu worker, which finishes it', async () => {
    const spec =
      'workerSelector:\n  gpu: "true"\nsteps:\n  - name: where\n    command: echo gpu-ran\n';
    expect((await callApi(base, 'POST', '/dags', { name: 'gpu-job', spec })).status).toBe(201);
    const started = await callApi(base, 'POST', '/dags/gpu-job/start', {});
    expect(started.status).toBe(200);
    const id = started.body.dagRunId as string;
    expect(await untilFinal(base, 'gpu-job', id, { attempts: 3000 })).toMatchObject({ status: 4 });
    const log = await callApi(base, 'GET', `/dag-runs/gpu-job/${id}/steps/where/log`);
    expect(log.body).toMatchObject({ content: 'gpu-ran' });
    expect(await logsOf('worker-gpu')).toContain(`running run ${id}`);
    expect(await logsOf('worker-cpu')).not.toContain(id);
  });
});
