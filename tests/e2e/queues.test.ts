import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, callApi, startAll } from './support/start-all.js';

let home: string;
let env: NodeJS.ProcessEnv;
/** Every process a test started, killed at the end whatever happened. */
const started: ChildProcess[] = [];

/** A `trellis start-all` process on a free port over `home`, its API base and its output. */
const startServer = async (): Promise<{
  proc: ChildProcess;
  base: string;
  output: () => string;
}> => {
  const s = await startAll(env);
  started.push(s.proc);
  return { proc: s.proc, base: `${s.url}/api/v2`, output: s.output };
};

const stopServer = async (proc: ChildProcess): Promise<void> => {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  proc.kill('SIGTERM');
  await once(proc, 'exit');
};

const cli = (...args: string[]) => {
  const r = spawnSync(process.execPath, [BIN, ...args], { env, encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
};

const json = callApi;

interface Run {
  dagRunId: string;
  status: number;
  startedAt: string;
  queuedAt: string;
  error?: string;
}

const runOf = async (base: string, name: string, id: string): Promise<Run> =>
  (await json(base, 'GET', `/dag-runs/${name}/${id}`)).body.dagRunDetails as Run;

beforeAll(() => {
  home = mkdtempSync(join(tmpdir(), 'trellis-e2e-queues-'));
  mkdirSync(join(home, 'dags'));
  env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, SVC_HOME: home };
  writeFileSync(
    join(home, 'dags', 'serial.yaml'),
    'steps:\n  - name: nap\n    command: sleep 0.3\n',
  );
  writeFileSync(join(home, 'dags', 'long.yaml'), 'steps:\n  - name: wait\n    command: sleep 60\n');
  writeFileSync(join(home, 'dags', 'mid.yaml'), 'steps:\n  - name: wait\n    command: sleep 2\n');
});
afterAll(async () => {
  const alive = started.filter((p) => p.exitCode === null && p.signalCode === null);
  for (const p of alive) p.kill('SIGKILL');
  await Promise.all(alive.map((p) => once(p, 'exit')));
  rmSync(home, { recursive: true, force: true, maxRetries: 5 });
});

describe('queues through trellis start-all and the CLI', { timeout: 40_000 }, () => {
  it('runs enqueued runs in FIFO order, one at a time, and lists them in GET /queues', async () => {
    const s = await startServer();
    try {
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await json(s.base, 'POST', '/dags/serial/enqueue', {});
        expect(r.status).toBe(200);
        ids.push(r.body.dagRunId as string);
      }
      const q = await json(s.base, 'GET', '/queues');
      const queues = q.body.queues as {
        name: string;
        type: string;
        maxConcurrency?: number;
        summary: { total: number };
      }[];
      const serial = queues.find((x) => x.name === 'serial');
      expect(serial).toMatchObject({ type: 'dag-based', summary: { total: 3 } });
      expect(serial?.maxConcurrency).toBeUndefined();
      await expect
        .poll(async () => (await runOf(s.base, 'serial', ids[2] as string)).status, {
          timeout: 15_000,
        })
        .toBe(4);
      const runs = await Promise.all(ids.map((id) => runOf(s.base, 'serial', id)));
      expect(runs.every((r) => r.queuedAt !== '')).toBe(true);
      const starts = runs.map((r) => r.startedAt);
      expect(starts).toEqual([...starts].sort());
      const metrics = await (await fetch(`${s.base}/metrics`)).text();
      expect(metrics).toMatch(/^svc_scheduler_running 1$/m);
      expect(metrics).toMatch(/^svc_dag_runs_queued_total 0$/m);
    } finally {
      await stopServer(s.proc);
    }
  });

  it('runs what the CLI enqueues, dequeues from the CLI, and keeps queued runs across a restart', async () => {
    // no server: the CLI queues runs in the store
    const a = cli('enqueue', 'mid', '--run-id', 'q1');
    expect(a.code).toBe(0);
    expect(a.out).toMatch(/run q1 of DAG "mid" queued in queue "mid"/);
    expect(cli('enqueue', 'mid', '--run-id', 'q2').code).toBe(0);
    expect(cli('enqueue', 'mid', '--run-id', 'q3').code).toBe(0);
    expect(cli('dequeue', 'mid:q2').code).toBe(0);
    expect(cli('dequeue', '--dag-run=mid:q2').code).toBe(1); // no longer queued

    const s = await startServer();
    try {
      await expect
        .poll(async () => (await runOf(s.base, 'mid', 'q1')).status, { timeout: 15_000 })
        .toBe(1);
      expect((await runOf(s.base, 'mid', 'q2')).status).toBe(3);
      expect((await runOf(s.base, 'mid', 'q3')).status).toBe(5);
      expect((await json(s.base, 'GET', '/dag-runs/mid/q3/dequeue')).status).toBe(200);
      expect((await json(s.base, 'GET', '/dag-runs/mid/q3/dequeue')).status).toBe(404);
      expect((await json(s.base, 'POST', '/dags/mid/enqueue', { dagRunId: 'q4' })).status).toBe(
        200,
      );
      expect((await runOf(s.base, 'mid', 'q4')).status).toBe(5);
    } finally {
      await stopServer(s.proc); // q1 finishes during the shutdown; q4 must stay queued
    }
    expect(cli('status', 'mid', '--run-id', 'q1', '--json').out).toMatch(/"status": 4/);
    expect(cli('status', 'mid', '--run-id', 'q4', '--json').out).toMatch(/"status": 5/);
    const again = await startServer();
    try {
      await expect
        .poll(async () => (await runOf(again.base, 'mid', 'q4')).status, { timeout: 15_000 })
        .toBe(4);
    } finally {
      await stopServer(again.proc);
    }
  });

  it('marks a run whose process was killed as failed and frees its slot (zombie detection)', async () => {
    const s = await startServer();
    try {
      const fg = spawn(process.execPath, [BIN, 'start', 'long', '--run-id', 'z1'], {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      started.push(fg);
      await expect
        .poll(async () => (await runOf(s.base, 'long', 'z1'))?.status, { timeout: 15_000 })
        .toBe(1);
      const queued = await json(s.base, 'POST', '/dags/long/start', { dagRunId: 'z2' });
      expect(queued.status).toBe(200);
      expect((await runOf(s.base, 'long', 'z2')).status).toBe(5);
      fg.kill('SIGKILL');
      await once(fg, 'exit');
      await expect
        .poll(async () => (await runOf(s.base, 'long', 'z1')).status, { timeout: 20_000 })
        .toBe(2);
      expect((await runOf(s.base, 'long', 'z1')).error).toMatch(/died before it finished/);
      await expect
        .poll(async () => (await runOf(s.base, 'long', 'z2')).status, { timeout: 5_000 })
        .toBe(1);
      await json(s.base, 'POST', '/dag-runs/long/z2/stop');
    } catch (e) {
      console.log(s.output());
      throw e;
    } finally {
      await stopServer(s.proc);
    }
  });
});
