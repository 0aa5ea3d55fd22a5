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
 * docker-compose.yml (issue 19, item 6): one image for every Trellis service, Redis with a
 * password (local/trellis-redis:7), a coordinator and two labelled workers with a token each,
 * started in order of their health checks; a run goes to the worker its workerSelector names.
 * The commands are docs/operations.md's ("Install with Docker Compose").
 */

const project = `trellis-e2e-${randomBytes(4).toString('hex')}`;
const secret = () => randomBytes(16).toString('hex');
let compose: readonly string[];
let env: NodeJS.ProcessEnv;
let base: string;

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
  env = {
    PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    HOME: tmpdir(),
    TRELLIS_IMAGE: await trellisImage(),
    TRELLIS_HTTP_PORT: String(port),
    TRELLIS_REDIS_PASSWORD: secret(),
    TRELLIS_GPU_WORKER_TOKEN: secret(),
    TRELLIS_CPU_WORKER_TOKEN: secret(),
  };
  base = `http://127.0.0.1:${port}/api/v2`;
  const up = await composeRun('up', '-d', '--no-build');
  if (up.code !== 0) throw new Error(`compose up failed:\n${up.stderr}\n${await fleetLogs()}`);
}, 600_000);

afterAll(async () => {
  if (env) await composeRun('down', '-v', '--remove-orphans');
}, 120_000);

describe('the compose fleet', { timeout: 180_000 }, () => {
  it('builds no image per service: every Trellis service runs the one named image', async () => {
    const images = await Promise.all(
      ['coordinator', 'worker-gpu', 'worker-cpu'].map(async (s) =>
        docker('inspect', '-f', '{{.Config.Image}}', await containerOf(s)),
      ),
    );
    expect(images).toEqual([env.TRELLIS_IMAGE, env.TRELLIS_IMAGE, env.TRELLIS_IMAGE]);
    const redis = await docker('inspect', '-f', '{{.Config.Image}}', await containerOf('redis'));
    expect(redis).toBe('local/trellis-redis:7');
  });

  it('brings every service to healthy, the workers listed with their labels', async () => {
    for (const service of ['redis', 'coordinator', 'worker-gpu', 'worker-cpu']) {
      const id = await containerOf(service);
      await until(
        `${service} becoming healthy`,
        async () => ((await health(id)) === 'healthy' ? true : undefined),
        fleetLogs,
      );
    }
    const r = await callApi(base, 'GET', '/workers');
    expect(r.status).toBe(200);
    const workers = (r.body.workers as { id: string; labels: unknown; state: string }[]).map(
      (w) => ({ id: w.id, labels: w.labels, state: w.state }),
    );
    expect(workers).toEqual([
      { id: 'worker-cpu', labels: { gpu: 'false', region: 'eu' }, state: 'active' },
      { id: 'worker-gpu', labels: { gpu: 'true', region: 'eu' }, state: 'active' },
    ]);
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
