import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { get } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Dockerode from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BUSYBOX,
  containerExists,
  ensureImage,
  removeContainers,
  startTestRegistry,
  uniqueName,
} from '../../test/support/docker-fixtures.js';
import { stepContext } from '../../test/support/exec-context.js';
import { DockerExecutor } from './docker.executor.js';

const docker = new Dockerode();
const executor = new DockerExecutor({ docker });
const ECHO_IMAGE = 'trellis-test/echo:1';
const names: string[] = [];
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'trellis-docker-'));
  await chmod(dir, 0o755); // readable by the container users of the tests
  await ensureImage(
    docker,
    ECHO_IMAGE,
    `FROM ${BUSYBOX}\nCMD ["echo", "the image default command ran"]\n`,
  );
}, 60_000);
afterAll(async () => {
  await removeContainers(docker, names);
  await rm(dir, { recursive: true, force: true });
});

const name = (what: string): string => {
  const n = uniqueName(what);
  names.push(n);
  return n;
};

const dockerStep = (
  config: Record<string, unknown>,
  fields: Record<string, unknown> = {},
  dagFields: Record<string, unknown> = {},
) =>
  stepContext(
    { executor: { type: 'docker', config }, ...fields },
    dir,
    { captureLimit: 1 << 16, graceMs: 1000 },
    dagFields,
  );

describe('docker executor (real Docker engine)', { timeout: 30_000 }, () => {
  it('runs the command in a new container, with its exit code and both streams, then removes it', async () => {
    const n = name('exit');
    const t = dockerStep(
      { image: BUSYBOX, containerName: n },
      { command: `sh -c "echo out; echo err >&2; exit 3"` },
    );
    const outcome = await executor.run(t.ctx);
    expect(outcome.exitCode).toBe(3);
    expect(t.out.text).toBe('out\n');
    expect(t.err.text).toBe('err\n');
    expect(outcome.output).toBe('out\n');
    expect(await containerExists(docker, n)).toBe(false); // autoRemove defaults to true
  });

  it("runs the image's default command when the step has none; autoRemove: false keeps the container", async () => {
    const n = name('default');
    const t = dockerStep({ image: ECHO_IMAGE, containerName: n, autoRemove: false });
    const outcome = await executor.run(t.ctx);
    expect(outcome.exitCode).toBe(0);
    expect(t.out.text).toBe('the image default command ran\n');
    expect(await containerExists(docker, n)).toBe(true);
  });

  it('passes env, workingDir, user and binds (relative to the step directory)', async () => {
    await writeFile(join(dir, 'input.txt'), 'from the host\n');
    const t = dockerStep(
      {
        image: BUSYBOX,
        container: { env: ['GREETING=hello'], workingDir: '/data', user: '1234' },
        host: { binds: ['./:/data'] },
      },
      {
        command:
          'sh -c "echo $GREETING $STEP_VAR; pwd; id -u; cat input.txt; echo out > written.txt"',
        env: [{ STEP_VAR: 'from-step' }],
      },
    );
    // the engine hands the step env to executors through ctx.env
    const outcome = await executor.run({ ...t.ctx, env: { ...t.ctx.env, STEP_VAR: 'from-step' } });
    expect(outcome.exitCode).toBe(1); // uid 1234 may not write to the bind: checked below
    expect(t.out.text).toBe('hello from-step\n/data\n1234\nfrom the host\n');
    const asRoot = dockerStep(
      { image: BUSYBOX, host: { binds: ['./:/data'] } },
      { command: 'sh -c "echo ok > /data/written.txt"' },
    );
    expect((await executor.run(asRoot.ctx)).exitCode).toBe(0);
    expect(await readFile(join(dir, 'written.txt'), 'utf8')).toBe('ok\n');
  });

  it('says when the Docker engine cannot be reached', async () => {
    const nowhere = new DockerExecutor({
      docker: new Dockerode({ socketPath: join(dir, 'no.sock') }),
    });
    const outcome = await nowhere.run(dockerStep({ image: BUSYBOX }, { command: 'true' }).ctx);
    expect(outcome.error).toBe(
      `docker: cannot reach the Docker engine at ${join(dir, 'no.sock')} (ENOENT): is dockerd running, and may this user use its socket?`,
    );
  });

  it('fails clearly for a missing image with pull: never', async () => {
    const outcome = await executor.run(
      dockerStep({ image: 'trellis-test/absent:0', pull: 'never' }, { command: 'true' }).ctx,
    );
    expect(outcome.exitCode).toBeNull();
    expect(outcome.error).toBe(
      'image trellis-test/absent:0 is not present and pull is never: load or build it first (docker load / docker build), or set pull: missing',
    );
  });

  it('execs into a running named container with the exec user, workingDir and env', async () => {
    const n = name('running');
    const c = await docker.createContainer({ Image: BUSYBOX, name: n, Cmd: ['sleep', '300'] });
    await c.start();
    const t = dockerStep(
      { containerName: n, exec: { user: '65534', workingDir: '/tmp', env: ['X=exec'] } },
      { command: 'sh -c "id -u; pwd; echo $X; exit 5"' },
    );
    const outcome = await executor.run(t.ctx);
    expect(outcome.exitCode).toBe(5);
    expect(t.out.text).toBe('65534\n/tmp\nexec\n');
    expect((await c.inspect()).State.Running).toBe(true); // exec leaves the container running
  });

  it('fails for a named container that does not run and has no image', async () => {
    const outcome = await executor.run(
      dockerStep({ containerName: 'trellis-test-nowhere' }, { command: 'true' }).ctx,
    );
    expect(outcome.error).toBe(
      'container trellis-test-nowhere is missing: start it, or set image so the step can create it',
    );
  });

  it('creates the named container from the image when it is stopped', async () => {
    const n = name('stopped');
    await (await docker.createContainer({ Image: BUSYBOX, name: n, Cmd: ['true'] })).start();
    await docker.getContainer(n).wait();
    const t = dockerStep({ image: BUSYBOX, containerName: n }, { command: 'echo fresh' });
    const outcome = await executor.run(t.ctx);
    expect(outcome.exitCode).toBe(0);
    expect(t.out.text).toBe('fresh\n');
    expect(t.err.text).toContain(`removing the stopped container ${n}`);
  });

  it('kills the container on stop', async () => {
    const n = name('stop');
    const t = dockerStep(
      { image: BUSYBOX, containerName: n },
      { command: 'sh -c "echo ready; sleep 300"' },
    );
    const running = executor.run(t.ctx);
    await t.out.until('ready');
    t.stopper.abort();
    const outcome = await running;
    expect(outcome.signal).toBe('SIGTERM');
    expect(outcome.exitCode).not.toBe(0);
    expect(await containerExists(docker, n)).toBe(false);
  });

  it('publishes ports with exposedPorts and portBindings', async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const t = dockerStep(
      {
        image: BUSYBOX,
        container: { exposedPorts: ['8080/tcp'] },
        host: { portBindings: { '8080/tcp': [{ hostIp: '127.0.0.1', hostPort: String(port) }] } },
      },
      {
        command:
          'sh -c "mkdir -p /www && echo served > /www/index.html && echo listening && httpd -f -p 8080 -h /www"',
      },
    );
    const running = executor.run(t.ctx);
    await t.out.until('listening');
    const body = await new Promise<string>((resolve, reject) => {
      const tryGet = (left: number): void => {
        get(`http://127.0.0.1:${port}/index.html`, (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve(text));
        }).on('error', (e) => (left > 0 ? setImmediate(() => tryGet(left - 1)) : reject(e)));
      };
      tryGet(2000);
    });
    t.stopper.abort();
    await running;
    expect(body).toBe('served\n');
  });

  it('joins a network with aliases (network.endpointsConfig) on the given platform', async () => {
    const net = name('net');
    await docker.createNetwork({ Name: net });
    try {
      const t = dockerStep(
        {
          image: BUSYBOX,
          platform: `linux/${process.arch === 'arm64' ? 'arm64' : 'amd64'}`,
          host: { networkMode: net },
          network: { endpointsConfig: { [net]: { aliases: ['db-alias'] } } },
        },
        { command: 'sh -c "ping -c 1 -W 2 db-alias >/dev/null && echo alias resolves"' },
      );
      const outcome = await executor.run(t.ctx);
      expect(t.err.text).toBe('');
      expect(outcome.exitCode).toBe(0);
      expect(t.out.text).toBe('alias resolves\n');
    } finally {
      await docker.getNetwork(net).remove();
    }
  });

  it('pulls with registryAuths credentials (pull: always), and with CONTAINER_AUTH_CONFIG', async () => {
    const registry = await startTestRegistry({
      repo: 'team/app',
      tag: '1',
      username: 'robot',
      password: 'pa55',
      message: 'pulled with auth',
    });
    const image = `${registry.host}/team/app:1`;
    try {
      const denied = await executor.run(dockerStep({ image, pull: 'always' }).ctx);
      expect(denied.error).toMatch(
        /^cannot pull image .*team\/app:1: .*(unauthorized|authentication required|no basic auth)/i,
      );

      const t = dockerStep(
        { image, pull: 'always' },
        {},
        { registryAuths: { [registry.host]: { username: 'robot', password: 'pa55' } } },
      );
      const outcome = await executor.run(t.ctx);
      expect(outcome.error).toBeUndefined();
      expect(t.out.text).toBe('pulled with auth\n');
      expect(registry.authorizations).toContain(
        `Basic ${Buffer.from('robot:pa55').toString('base64')}`,
      );

      await docker.getImage(image).remove({ force: true });
      const fromEnv = new DockerExecutor({
        docker,
        authConfig: JSON.stringify({
          auths: { [registry.host]: { auth: Buffer.from('robot:pa55').toString('base64') } },
        }),
      });
      const e = dockerStep({ image, pull: 'missing' }, { command: 'echo via env auth' });
      expect((await fromEnv.run(e.ctx)).exitCode).toBe(0);
      expect(e.out.text).toBe('via env auth\n');
    } finally {
      await docker
        .getImage(image)
        .remove({ force: true })
        .catch(() => undefined);
      await registry.close();
    }
  });
});
