import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NodeStatus, RunStatus } from '@trellis/core';
import Dockerode from 'dockerode';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DockerExecutor } from '../docker/docker.executor.js';
import { BUSYBOX, ensureImage } from '../../test/support/docker-fixtures.js';
import { runDagText } from '../../test/support/run-dag.js';
import { DagContainerHook } from './dag-container.hook.js';

const docker = new Dockerode();
const HEALTHY = 'trellis-test/healthy:1';
const UNHEALTHY = 'trellis-test/unhealthy:1';
const SLEEPER = 'trellis-test/sleeper:1';
let root: string;
let dir: string;
let n = 0;

const run = (yaml: string, hook = new DagContainerHook({ docker })) =>
  runDagText(yaml, dir, {
    executors: { docker: new DockerExecutor({ docker }) },
    runHooks: [hook],
  });

/** Containers Trellis started for a DAG (by the label it sets). */
const containersOf = async (dag: string) =>
  docker.listContainers({ all: true, filters: { label: [`trellis.dag=${dag}`] } });

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'trellis-dagc-'));
  await chmod(root, 0o755);
  await ensureImage(docker, HEALTHY, `FROM ${BUSYBOX}\nHEALTHCHECK --interval=1s CMD true\n`);
  await ensureImage(docker, SLEEPER, `FROM ${BUSYBOX}\nCMD ["sleep", "300"]\n`);
  await ensureImage(
    docker,
    UNHEALTHY,
    `FROM ${BUSYBOX}\nHEALTHCHECK --interval=1s --retries=1 CMD false\n`,
  );
}, 60_000);
beforeEach(async () => {
  dir = join(root, String(++n));
  await mkdir(dir, { recursive: true });
});
afterAll(async () => {
  for (const c of await docker.listContainers({ all: true, filters: { label: ['trellis.dag'] } }))
    if (c.Labels['trellis.dag']?.startsWith('dagc-'))
      await docker.getContainer(c.Id).remove({ force: true });
  await rm(root, { recursive: true, force: true });
});

describe('DAG-level container (real Docker engine)', { timeout: 30_000 }, () => {
  it('starts one container for the run, runs three steps in it, and removes it', async () => {
    await mkdir(join(dir, 'data'));
    await writeFile(join(dir, 'data', 'in.txt'), 'host file\n');
    const { record, recorder } = await run(`
name: dagc-three
env:
  - GREETING: hi
container:
  image: ${BUSYBOX}
  pullPolicy: never
  env:
    - MODE=batch
    - FROM_DAG=\${GREETING}
  volumes:
    - ./data:/data
  workingDir: /data
steps:
  - name: write
    command: sh -c 'echo state > /tmp/state; hostname > /data/host-1; echo "$MODE $FROM_DAG $GREETING"; pwd'
  - name: read
    command: cat /tmp/state in.txt
  - name: same
    executor:
      type: docker
      config:
        image: ignored/image:never-pulled
    command: hostname
`);
    expect(record.status).toBe(RunStatus.Succeeded);
    expect(recorder.lines.join('\n')).toContain('starting the DAG container');
    expect(await readFile(join(dir, 'logs', 'write.out'), 'utf8')).toBe('batch hi hi\n/data\n');
    expect(await readFile(join(dir, 'logs', 'read.out'), 'utf8')).toBe('state\nhost file\n');
    const host = await readFile(join(dir, 'data', 'host-1'), 'utf8');
    expect(await readFile(join(dir, 'logs', 'same.out'), 'utf8')).toBe(host);
    expect(recorder.lines.filter((l) => l.startsWith('starting the DAG container'))).toHaveLength(
      1,
    );
    expect(await containersOf('dagc-three')).toEqual([]);
  });

  it('keeps the container with keepContainer, runs as user, and fails a step by its exit code', async () => {
    const { record } = await run(`
name: dagc-keep
container:
  image: ${BUSYBOX}
  user: "4321"
  keepContainer: true
steps:
  - name: who
    command: id -u
  - name: bad
    command: sh -c 'exit 7'
`);
    expect(record.status).toBe(RunStatus.Failed);
    expect(await readFile(join(dir, 'logs', 'who.out'), 'utf8')).toBe('4321\n');
    expect(record.nodes[1]?.exitCode).toBe(7);
    const kept = await containersOf('dagc-keep');
    expect(kept).toHaveLength(1);
    expect(kept[0]?.State).toBe('running');
  });

  it('applies network, ports and restartPolicy to the container', async () => {
    const net = `dagc-net-${n}`;
    await docker.createNetwork({ Name: net });
    try {
      const { record } = await run(`
name: dagc-wiring
container:
  image: ${BUSYBOX}
  network: ${net}
  ports: ["127.0.0.1:0:8080", "9090/udp"]
  restartPolicy: unless-stopped
  keepContainer: true
steps:
  - hostname
`);
      expect(record.status).toBe(RunStatus.Succeeded);
      const [c] = await containersOf('dagc-wiring');
      const info = await docker.getContainer(c?.Id ?? '').inspect();
      expect(info.HostConfig.NetworkMode).toBe(net);
      expect(info.HostConfig.RestartPolicy?.Name).toBe('unless-stopped');
      expect(info.HostConfig.PortBindings).toEqual({
        '8080/tcp': [{ HostIp: '127.0.0.1', HostPort: '0' }],
      });
      expect(Object.keys(info.Config.ExposedPorts ?? {}).sort()).toEqual(['8080/tcp', '9090/udp']);
      await docker.getContainer(c?.Id ?? '').remove({ force: true });
    } finally {
      await docker.getNetwork(net).remove();
    }
  });

  it('waits for healthy', async () => {
    const { record, recorder } = await run(`
name: dagc-healthy
container:
  image: ${HEALTHY}
  waitFor: healthy
steps:
  - echo after healthy
`);
    expect(record.status).toBe(RunStatus.Succeeded);
    expect(recorder.lines.join('\n')).toMatch(/is ready/);
  });

  it('gives up waiting with an error holding the last known state', async () => {
    const { record } = await run(
      `
name: dagc-unhealthy
container:
  image: ${UNHEALTHY}
  waitFor: healthy
steps:
  - name: never
    command: echo never
`,
      new DagContainerHook({ docker, readyTimeoutMs: 1500, pollMs: 100 }),
    );
    expect(record.status).toBe(RunStatus.Failed);
    expect(record.nodes[0]?.status).toBe(NodeStatus.Failed);
    expect(record.nodes[0]?.error).toMatch(
      /was not ready after 1\.5s \(waitFor: healthy\); last known state: status running, health (starting|unhealthy)/,
    );
    expect(await containersOf('dagc-unhealthy')).toEqual([]);
  });

  it('starts with command and waits for logPattern', async () => {
    const { record } = await run(`
name: dagc-pattern
container:
  image: ${BUSYBOX}
  startup: command
  command: [sh, -c, "echo warming up; sleep 0.5; echo server ready; exec sleep 300"]
  logPattern: "^server ready$"
steps:
  - cat /proc/1/cmdline
`);
    expect(record.status).toBe(RunStatus.Succeeded);
    const cmdline = await readFile(
      join(dir, 'logs', `${record.nodes[0]?.step.name ?? ''}.out`),
      'utf8',
    );
    expect(cmdline.replace(/\0/g, ' ')).toContain('sleep 300');
  });

  it('stops the step running in the container and removes the container', async () => {
    const stop = new AbortController();
    const { record } = await runDagText(
      `
name: dagc-stop
container:
  image: ${BUSYBOX}
steps:
  - name: long
    command: sh -c 'echo ready; sleep 300; echo not reached'
`,
      dir,
      {
        executors: { docker: new DockerExecutor({ docker }) },
        runHooks: [new DagContainerHook({ docker })],
        stop: stop.signal,
        onOutput: (key, text) => {
          if (key === 'long' && text.includes('ready')) stop.abort();
        },
      },
    );
    expect(record.status).toBe(RunStatus.Cancelled);
    expect(record.nodes[0]?.status).toBe(NodeStatus.Cancelled);
    expect(await containersOf('dagc-stop')).toEqual([]);
  });

  it("starts with the image's own entrypoint, and says when the container stops before it is ready", async () => {
    const ok = await run(`
name: dagc-entry
container:
  image: ${SLEEPER}
  startup: entrypoint
steps:
  - cat /proc/1/cmdline
`);
    expect(ok.record.status).toBe(RunStatus.Succeeded);
    const dead = await run(`
name: dagc-dead
container:
  image: ${BUSYBOX}
  startup: entrypoint
steps:
  - name: one
    command: "true"
`);
    expect(dead.record.status).toBe(RunStatus.Failed);
    // it dies at once: either the readiness check or the exec finds it stopped
    expect(dead.record.nodes[0]?.error).toMatch(
      /(stopped before it was ready|is not running) \(status exited/,
    );
  });

  it('fails the steps clearly when the image is missing and pullPolicy is never', async () => {
    const { record } = await run(`
name: dagc-missing
container:
  image: trellis-test/absent:0
  pullPolicy: never
steps:
  - name: one
    command: "true"
`);
    expect(record.status).toBe(RunStatus.Failed);
    expect(record.nodes[0]?.error).toContain(
      'image trellis-test/absent:0 is not present and pull is never',
    );
  });
});
