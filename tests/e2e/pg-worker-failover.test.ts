import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
import { PgDb } from '@trellis/store-pg';
import { startPostgres, type PrivatePostgres } from '@trellis/testkit';
import { startListedInstance } from './support/pg-instance.js';
import { callApi, untilFinal, type StartAll } from './support/start-all.js';

/**
 * Workers across coordinators (issue 20 item 5): two start-all instances on one PostgreSQL and
 * one Redis, a worker given both coordinator addresses, a run in flight on it. The coordinator
 * the worker is connected to is killed with SIGKILL: the worker moves to the other, the run
 * finishes there, its status and logs are read from the survivor, and nothing the worker sent
 * is applied twice (every log line once, in order; the stored status never goes back).
 */
let postgres: PrivatePostgres;
let redis: PrivateRedis;
let db: PgDb;
let databaseUrl: string;
let root: string;
const instances: StartAll[] = [];
let worker: WorkerProcess | undefined;

const DAGS = (): string => join(root, 'dags');
const GATE = (): string => join(root, 'gate');
const LINES = 40;

const startInstance = (n: number, grpcPort: number): Promise<StartAll> =>
  startListedInstance(instances, { root, databaseUrl, n, redisUrl: redis.url, grpcPort });

beforeAll(async () => {
  [postgres, redis] = await Promise.all([startPostgres(), startRedis()]);
  databaseUrl = await postgres.createDatabase('trellis_failover');
  db = new PgDb({ url: databaseUrl, poolSize: 2 });
  root = mkdtempSync(join(tmpdir(), 'trellis-e2e-pg-failover-'));
  mkdirSync(DAGS());
  // half the lines, then wait for the gate (the test opens it once the worker moved), the rest
  const script = [
    `i=1; while [ $i -le ${LINES / 2} ]; do echo "line-$i"; i=$((i+1)); done`,
    `while [ ! -f ${GATE()} ]; do sleep 0.1; done`,
    `i=${LINES / 2 + 1}; while [ $i -le ${LINES} ]; do echo "line-$i"; i=$((i+1)); done`,
  ].join('; ');
  writeFileSync(
    join(DAGS(), 'moving.yaml'),
    `workerSelector:\n  pool: ha\nsteps:\n  - name: s\n    command: sh -c '${script}'\n  - name: t\n    depends: [s]\n    command: echo done\n`,
  );
}, 120_000);

afterAll(async () => {
  await worker?.stop();
  for (const s of instances) await s.stop().catch(() => undefined);
  await db?.end();
  await Promise.all([postgres?.stop(), redis?.stop()]);
  rmSync(root, { recursive: true, force: true });
}, 120_000);

const stepLog = async (s: StartAll, id: string, step: string): Promise<string> => {
  const r = await callApi(`${s.url}/api/v2`, 'GET', `/dag-runs/moving/${id}/steps/${step}/log`);
  return r.status === 200 ? ((r.body.content as string | undefined) ?? '') : '';
};

const storedStatus = async (id: string): Promise<{ status: number; revision: number }> => {
  const r = await db.query<{ status: number; revision: string }>(
    "SELECT status, revision FROM trellis_runs WHERE name = 'moving' AND dag_run_id = $1",
    [id],
  );
  const row = r.rows[0];
  return { status: Number(row?.status ?? -1), revision: Number(row?.revision ?? -1) };
};

/** What the processes printed, for a failure's message. */
const outputs = (): string =>
  [
    ...instances.map((s, i) => `--- start-all ${i + 1}:\n${s.output().slice(-4000)}`),
    `--- worker:\n${worker?.output().slice(-4000) ?? ''}`,
  ].join('\n');

/** `p`, or a failure naming `what` with the processes' output after `ms` (a bound on hangs). */
const bounded = async <T>(p: Promise<T>, what: string, ms = 60_000): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms:\n${outputs()}`)), ms);
  });
  try {
    return await Promise.race([p, hang]);
  } finally {
    clearTimeout(timer);
  }
};

describe('a worker given two coordinators on one PostgreSQL', () => {
  it('moves to the survivor when its coordinator is killed; the run finishes, applied once', async () => {
    const [portA, portB] = [await freePort(), await freePort()];
    const a = await startInstance(1, portA);
    const b = await startInstance(2, portB);
    const whome = mkdtempSync(join(root, 'worker-'));
    worker = await spawnWorker({
      id: 'mover',
      labels: { pool: 'ha' },
      coordinator: `127.0.0.1:${portA},127.0.0.1:${portB}`,
      redisUrl: redis.url,
      home: whome,
    });
    await bounded(worker.waitFor(`coordinator 127.0.0.1:${portA})`), 'connection to a');

    const started = await callApi(`${a.url}/api/v2`, 'POST', '/dags/moving/start', {});
    expect(started.status).toBe(200);
    const id = started.body.dagRunId as string;
    // the first half is delivered through a (read from b: one store)
    await bounded(
      expect
        .poll(async () => (await stepLog(b, id, 's')).split('\n').length, { timeout: 90_000 })
        .toBe(LINES / 2),
      'first half of the log',
      90_000,
    );
    const before = await storedStatus(id);
    expect(before.status).toBe(1);

    a.proc.kill('SIGKILL');
    await bounded(worker.waitFor(`moving to 127.0.0.1:${portB}`), 'move to b');
    await bounded(worker.waitFor(`coordinator 127.0.0.1:${portB})`), 'connection to b');
    writeFileSync(GATE(), '');

    const final = await untilFinal(`${b.url}/api/v2`, 'moving', id, {
      attempts: 3000,
      context: outputs,
    });
    expect(final.status).toBe(4);
    // every line once and in order, read from the survivor
    const lines = (await stepLog(b, id, 's')).split('\n');
    expect(lines).toEqual(Array.from({ length: LINES }, (_, i) => `line-${i + 1}`));
    expect(await stepLog(b, id, 't')).toBe('done');
    // the stored status went forward only: running before the move, succeeded after it, with a
    // higher revision; the worker's reports left nothing to send
    const after = await storedStatus(id);
    expect(after.status).toBe(4);
    expect(after.revision).toBeGreaterThan(before.revision);
    const lineRows = await db.query<{ n: string }>(
      `SELECT count(*) AS n FROM trellis_log_lines x JOIN trellis_logs l ON l.id = x.log_id
       WHERE l.path LIKE $1`,
      [`%/${id}/s.out`],
    );
    expect(Number(lineRows.rows[0]?.n)).toBe(LINES);
    const runLog = await callApi(`${b.url}/api/v2`, 'GET', `/dag-runs/moving/${id}/log`);
    expect(runLog.status).toBe(200);
    const content = (runLog.body.content as string | undefined) ?? '';
    // the run log's lines are unique (none applied twice)
    const logLines = content.split('\n').filter((l) => l !== '');
    expect(new Set(logLines).size).toBe(logLines.length);
  }, 240_000);
});
