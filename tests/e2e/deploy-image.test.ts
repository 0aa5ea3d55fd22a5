import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callApi, untilFinal } from './support/start-all.js';
import {
  docker,
  health,
  requireBaseImages,
  run,
  trellisImage,
  until,
} from './support/docker-cli.js';

/**
 * deploy/Dockerfile (issue 19, item 6): the image is built on the base made locally
 * (scripts/base-images.sh) from the packed tarball, its HEALTHCHECK reports healthy, a DAG
 * runs through the API inside it, and every process runs as the non-root `trellis` user.
 */

const name = `trellis-e2e-image-${randomBytes(4).toString('hex')}`;
let image: string;
let base: string;

beforeAll(async () => {
  await requireBaseImages();
  image = await trellisImage();
  await docker('run', '-d', '--name', name, '-p', '127.0.0.1::8080', image);
  const port = (await docker('port', name, '8080')).split('\n')[0]?.split(':').at(-1);
  base = `http://127.0.0.1:${port ?? ''}/api/v2`;
}, 600_000);

afterAll(async () => {
  await run('docker', ['rm', '-f', '-v', name]);
});

const logs = async (): Promise<string> => {
  const r = await run('docker', ['logs', name]);
  const h = await run('docker', ['inspect', '-f', '{{json .State.Health}}', name]);
  return `${r.stdout}${r.stderr}\nhealth: ${h.stdout}`;
};

describe('the Docker image', { timeout: 120_000 }, () => {
  it('reports healthy through its HEALTHCHECK', async () => {
    const status = await until(
      'the container becoming healthy',
      async () => {
        const s = await health(name);
        if (s === 'unhealthy') throw new Error(`unhealthy:\n${await logs()}`);
        return s === 'healthy' ? s : undefined;
      },
      logs,
    );
    expect(status).toBe('healthy');
    const check = JSON.parse(await docker('inspect', '-f', '{{json .Config.Healthcheck}}', name));
    expect(check.Test).toEqual(['CMD', 'node', '/opt/trellis/healthcheck.mjs']);
  });

  it('runs a DAG through the API inside the container, as the trellis user', async () => {
    const spec = 'steps:\n  - name: who\n    command: id -u\n';
    expect((await callApi(base, 'POST', '/dags', { name: 'in-image', spec })).status).toBe(201);
    const started = await callApi(base, 'POST', '/dags/in-image/start', {});
    expect(started.status).toBe(200);
    const id = started.body.dagRunId as string;
    const details = await untilFinal(base, 'in-image', id, { attempts: 3000 });
    expect(details).toMatchObject({ status: 4 });
    const log = await callApi(base, 'GET', `/dag-runs/in-image/${id}/steps/who/log`);
    expect(log.body.content).toBe('10001');
  });

  it('runs its processes as uid 10001, not root', async () => {
    expect(await docker('inspect', '-f', '{{.Config.User}}', name)).toBe('trellis');
    // `docker top` lists every process of the container (ps on the host): pid, then uid
    const rows = (await docker('top', name, '-o', 'pid,uid')).split('\n').slice(1);
    expect(rows.length).toBeGreaterThan(0);
    expect(new Set(rows.map((r) => r.trim().split(/\s+/)[1]))).toEqual(new Set(['10001']));
    expect(await docker('exec', name, 'id', '-un')).toBe('trellis');
  });

  it('holds the bundled package only: no npm, no pnpm, no sources, no dev dependencies', async () => {
    const tools = await run('docker', ['exec', name, 'sh', '-c', 'command -v npm pnpm tsc']);
    expect(tools.stdout).toBe('');
    const pkgDir = '/opt/trellis/lib/node_modules/trellis';
    const deps = await docker('exec', name, 'ls', `${pkgDir}/node_modules`);
    expect(deps.split('\n')).toEqual(['jq-wasm']);
    const src = await run('docker', ['exec', name, 'find', pkgDir, '-name', '*.ts']);
    expect(src.stdout).toBe('');
    expect(await docker('exec', name, 'trellis', '--version')).toMatch(/^\d+\.\d+\.\d+/);
  });
});
