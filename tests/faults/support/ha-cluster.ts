import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { expect } from 'vitest';
import { freePort, spawnWorker, type WorkerProcess } from '@trellis/dispatch/testing';
import type { PgDb } from '@trellis/store-pg';
import { callApi, startAll, type StartAll } from '../../e2e/support/start-all.js';

/**
 * Replicated coordinators for the fault suite (issue 20 item 4): `start-all` instances on one
 * private PostgreSQL and one private Redis, each with its gRPC coordinator port, and workers
 * each registered with one of them. An instance keeps its home and ports across a restart.
 */
export interface HaInstance {
  readonly n: number;
  readonly grpcPort: number;
  proc: StartAll;
}

export interface HaClusterOptions {
  readonly root: string;
  readonly dagsDir: string;
  readonly databaseUrl: string;
  readonly redisUrl: string;
  /** More environment for every instance (the lease's TTL and renewal). */
  readonly env?: Record<string, string>;
}

const alive = (p: ChildProcess): boolean => p.exitCode === null && p.signalCode === null;

/** Starts (or restarts, on its home and ports) instance `n`. */
export const startInstance = async (
  o: HaClusterOptions,
  n: number,
  grpcPort?: number,
): Promise<HaInstance> => {
  const home = join(o.root, `home-${n}`);
  mkdirSync(home, { recursive: true });
  const port = grpcPort ?? (await freePort());
  const proc = await startAll(
    {
      PATH: '/usr/local/bin:/usr/bin:/bin',
      HOME: home,
      SVC_HOME: home,
      SVC_DAGS_DIR: o.dagsDir,
      SVC_DATABASE_URL: o.databaseUrl,
      SVC_REDIS_URL: o.redisUrl,
      ...o.env,
    },
    ['--dags', o.dagsDir, '--coordinator-port', String(port)],
  );
  return { n, grpcPort: port, proc };
};

/** A worker with labels `role=ha` registered with `instance`'s coordinator. */
export const haWorker = (id: string, instance: HaInstance, o: HaClusterOptions, home: string) =>
  spawnWorker({
    id,
    labels: { role: 'ha' },
    coordinator: `127.0.0.1:${instance.grpcPort}`,
    redisUrl: o.redisUrl,
    concurrency: 4,
    graceSec: 30,
    home,
  });

export const base = (i: HaInstance): string => `${i.proc.url}/api/v2`;

export const roleOf = async (i: HaInstance): Promise<unknown> =>
  (await callApi(base(i), 'GET', '/health')).body.role;

/**
 * Polls /health of `candidates` until exactly one says leader (an upper bound against hangs:
 * the take-over time is measured by bench/ha-takeover.bench.js, not asserted here).
 */
export const leaderOf = async (candidates: readonly HaInstance[]): Promise<HaInstance> => {
  let found: HaInstance | undefined;
  await expect
    .poll(
      async () => {
        const roles = await Promise.all(candidates.map((c) => roleOf(c).catch(() => undefined)));
        found = candidates[roles.indexOf('leader')];
        return roles.filter((r) => r === 'leader').length;
      },
      { timeout: 30_000, interval: 100 },
    )
    .toBe(1);
  return found as HaInstance;
};

/** What a stream of starts did: the ids answered 200, the rate it kept, other answers. */
export interface StreamResult {
  readonly accepted: string[];
  readonly refused: string[];
  readonly sent: number;
  readonly achievedPerSec: number;
}

/**
 * Starts `dag` at a constant `perSec` for `seconds` (the issue's load), round-robin over the
 * instances `targets()` names as reachable; a request is not awaited before the next is sent
 * (a request to a frozen instance waits there until it resumes). Resolves once every request
 * was answered or failed.
 */
export const streamRuns = async (
  dag: string,
  targets: () => readonly HaInstance[],
  perSec: number,
  seconds: number,
): Promise<StreamResult> => {
  const accepted: string[] = [];
  const refused: string[] = [];
  const pending: Promise<void>[] = [];
  const total = perSec * seconds;
  const t0 = Date.now();
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / perSec;
    if (due > Date.now()) await delay(due - Date.now());
    const live = targets().filter((t) => alive(t.proc.proc));
    const t = live[i % Math.max(1, live.length)];
    if (!t) continue;
    pending.push(
      callApi(base(t), 'POST', `/dags/${dag}/start`, {}).then(
        (r) =>
          void (r.status === 200
            ? accepted.push(r.body.dagRunId as string)
            : refused.push(`${r.status} ${JSON.stringify(r.body)}`)),
        (e: unknown) => void refused.push(`instance ${t.n}: ${(e as Error).message}`),
      ),
    );
  }
  const achievedPerSec = total / ((Date.now() - t0) / 1000);
  await Promise.all(pending);
  return { accepted, refused, sent: total, achievedPerSec };
};

/** Every run of `dag` the database holds (accepted or not: a start answered by no one). */
export const runIdsInDb = async (db: PgDb, dag: string): Promise<string[]> =>
  (
    await db.query<{ dag_run_id: string }>(
      'SELECT dag_run_id FROM trellis_runs WHERE name = $1 AND NOT is_child',
      [dag],
    )
  ).rows.map((r) => r.dag_run_id);

/** The schedule fires of `dag`, oldest first: minute and the instance (holder) that claimed it. */
export const firesOf = async (db: PgDb, dag: string): Promise<{ at: number; by: string }[]> =>
  (
    await db.query<{ fire_at: Date; fired_by: string }>(
      'SELECT fire_at, fired_by FROM trellis_schedule_fires WHERE dag_name = $1 ORDER BY fire_at',
      [dag],
    )
  ).rows.map((r) => ({ at: r.fire_at.getTime(), by: r.fired_by }));

/** The pid in a lease holder (`host:pid:incarnation`). */
export const pidOfHolder = (holder: string): number => Number(holder.split(':')[1]);

/** A minute cron DAG whose step appends its run id to `ledgerFile` (executed where it fires). */
export const writeTickDag = (dagsDir: string, name: string, ledgerFile: string): void =>
  writeFileSync(
    join(dagsDir, `${name}.yaml`),
    [
      'schedule: "* * * * *"',
      'steps:',
      '  - name: tick',
      `    command: ${JSON.stringify(`echo "$DAG_RUN_ID" >> ${ledgerFile}`)}`,
      '',
    ].join('\n'),
  );

/** SIGKILLs a process and resolves once it exited. */
export const kill9 = async (p: StartAll | WorkerProcess): Promise<void> => {
  if (!alive(p.proc)) return;
  const exited = once(p.proc, 'exit');
  p.proc.kill('SIGKILL');
  await exited;
};
