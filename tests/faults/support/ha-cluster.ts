import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import {
  freePort,
  spawnWorker,
  startRedis,
  type PrivateRedis,
  type WorkerProcess,
} from '@trellis/dispatch/testing';
import { PgDb } from '@trellis/store-pg';
import { startPostgres, type PrivatePostgres } from '@trellis/testkit';
import { roleOf, startPgInstance } from '../../e2e/support/pg-instance.js';
import { callApi, type StartAll } from '../../e2e/support/start-all.js';
import { Ledger } from './ledger.js';

/** The lease of the HA fault tests: the defaults (docs/ha.md). */
export const LEASE = { ttlMs: 3000, renewMs: 1000 };

/**
 * Two `start-all` on a private PostgreSQL and Redis, two workers given both coordinator
 * addresses, and three DAGs: `emb` (run by the instance that starts it), `fleet` (a worker
 * selector: run on a worker), both ledger steps, and `tick` (cron, every minute).
 */
export interface HaCluster {
  readonly root: string;
  readonly db: PgDb;
  readonly ledger: Ledger;
  readonly instances: StartAll[];
  readonly workers: WorkerProcess[];
  /** The instance whose GET /health says leader (exactly one), awaited. */
  leader(candidates?: StartAll[]): Promise<StartAll>;
  /** Every process's output tail, for a failure's message. */
  /** The processes' last output, and every line naming one of `ids`. */
  context(...ids: string[]): string;
  stop(): Promise<void>;
}

let shared: { postgres: PrivatePostgres; redis: PrivateRedis } | undefined;

/** The private PostgreSQL and Redis of the file (one of each, a database per scenario). */
export const services = async (): Promise<{ postgres: PrivatePostgres; redis: PrivateRedis }> => {
  if (!shared) {
    const [postgres, redis] = await Promise.all([startPostgres(), startRedis()]);
    shared = { postgres, redis };
  }
  return shared;
};

export const stopServices = async (): Promise<void> => {
  if (!shared) return;
  await Promise.all([shared.postgres.stop(), shared.redis.stop()]);
  shared = undefined;
};

const writeDags = (dir: string, ledger: Ledger): void => {
  mkdirSync(dir, { recursive: true });
  const step = JSON.stringify(`${ledger.command(false)}; sleep 0.2`);
  // no per-DAG limit: at 10 starts/s of each DAG, the default of one active run (0.2 s steps)
  // would queue most of the stream behind itself, which is not the fault under test
  const top = 'maxActiveRuns: -1\n';
  writeFileSync(join(dir, 'emb.yaml'), `${top}steps:\n  - name: work\n    command: ${step}\n`);
  writeFileSync(
    join(dir, 'fleet.yaml'),
    `${top}workerSelector:\n  pool: ha\nsteps:\n  - name: work\n    command: ${step}\n`,
  );
  writeFileSync(
    join(dir, 'tick.yaml'),
    'schedule: "* * * * *"\nsteps:\n  - name: s\n    command: echo tick\n',
  );
};

export const startCluster = async (name: string): Promise<HaCluster> => {
  const { postgres, redis } = await services();
  const databaseUrl = await postgres.createDatabase(name);
  const root = mkdtempSync(join(tmpdir(), `trellis-faults-${name}-`));
  const ledger = new Ledger(root);
  writeDags(join(root, 'dags'), ledger);
  const db = new PgDb({ url: databaseUrl, poolSize: 2 });
  const ports = [await freePort(), await freePort()];
  const instances: StartAll[] = [];
  const workers: WorkerProcess[] = [];
  for (const [i, port] of ports.entries())
    instances.push(
      await within(
        START_MS,
        `start-all ${i + 1} serving`,
        startPgInstance({
          root,
          n: i + 1,
          databaseUrl,
          lease: LEASE,
          // the stream's starts and the workers' reports share the pool: sized for 20 runs/s
          env: { SVC_REDIS_URL: redis.url, SVC_DATABASE_POOL_SIZE: '20' },
          args: ['--coordinator-port', String(port)],
        }),
      ),
    );
  const addresses = ports.map((p) => `127.0.0.1:${p}`);
  for (const [i, id] of ['ha-w1', 'ha-w2'].entries()) {
    const home = join(root, `worker-${id}`);
    mkdirSync(home);
    // each worker is given both addresses, the first one differing, so each instance has one
    const order = i === 0 ? addresses : [...addresses].reverse();
    workers.push(
      await within(
        START_MS,
        `worker ${id} started`,
        spawnWorker({
          id,
          labels: { pool: 'ha' },
          coordinator: order.join(','),
          redisUrl: redis.url,
          concurrency: 8,
          graceSec: 30,
          home,
        }),
      ),
    );
  }
  const context = (...ids: string[]): string =>
    [
      ...instances.map((s, i) => `--- start-all ${i + 1}:\n${s.output().slice(-6000)}`),
      ...workers.map((w) => `--- ${w.id}:\n${w.output().slice(-3000)}`),
      // every line of every process that names one of `ids` (runs left behind)
      ...ids.map((id) => {
        const outs = [...instances.map((s) => s.output()), ...workers.map((w) => w.output())];
        const lines = outs.flatMap((o, i) =>
          o
            .split('\n')
            .filter((l) => l.includes(id))
            .map((l) => `[${i}] ${l}`),
        );
        return `--- run ${id}:\n${lines.join('\n')}`;
      }),
    ].join('\n');
  const leader = async (candidates = instances): Promise<StartAll> => {
    let found: StartAll | undefined;
    await expect
      .poll(
        async () => {
          const roles = await Promise.all(candidates.map((c) => answered(roleOf(c), 'gone')));
          found = candidates[roles.indexOf('leader')];
          return roles.filter((r) => r === 'leader').length;
        },
        { timeout: 30_000, interval: 200 },
      )
      .toBe(1);
    return found as StartAll;
  };
  const stop = async (): Promise<void> => {
    ledger.dispose();
    for (const s of instances) s.proc.kill('SIGCONT');
    // a process that does not exit after SIGTERM is killed and named: a hang here would
    // otherwise run out the test's time and leave the next scenario sharing its Redis
    const late: string[] = [];
    const bounded = (
      what: string,
      p: { proc: ChildProcess; stop(): Promise<unknown>; output(): string },
    ) =>
      untilExit(p, STOP_MS).then((ok) => {
        // start-all gives up on a part that does not stop, and says so (shutdown-phases.ts)
        // a stopped process that something still held is ended by the binary (linger-guard.ts);
        // what held it is printed for the next reader
        const held = /still running .* held by: .*/.exec(p.output());
        if (held) console.log(`${what}: ${held[0]}`);
        if (!ok || p.output().includes('did not stop; exiting'))
          late.push(`${what} (pid ${String(p.proc.pid)}):\n${p.output().slice(-4000)}`);
      });
    await Promise.all(workers.map((w) => bounded(`worker ${w.id}`, w)));
    await Promise.all(instances.map((s, i) => bounded(`start-all ${i + 1}`, s)));
    await db.end();
    rmSync(root, { recursive: true, force: true, maxRetries: 5 });
    if (late.length > 0)
      throw new Error(
        `not stopped in time after SIGTERM (killed after ${STOP_MS / 1000} s):\n${late.join('\n')}`,
      );
  };
  return { root, db, ledger, instances, workers, leader, context, stop };
};

/** How long a process of the cluster may take to start (its "serving" or "started" line). */
const START_MS = 60_000;

/** `p`, or an error naming `what` when it has not settled within `ms`. */
const within = async <T>(ms: number, what: string, p: Promise<T>): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>(
    (_, reject) =>
      (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms / 1000} s`)), ms)),
  );
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
};

/** How long a process may take to exit after SIGTERM in a scenario's clean-up. */
const STOP_MS = 60_000;

/** SIGTERM and wait up to `ms` for the exit; false (and SIGKILL) when it did not come. */
const untilExit = async (
  p: { proc: ChildProcess; stop(): Promise<unknown> },
  ms: number,
): Promise<boolean> => {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((r) => (timer = setTimeout(() => r(false), ms)));
  const ok = await Promise.race([
    p.stop().then(
      () => true,
      () => true,
    ),
    late,
  ]);
  clearTimeout(timer);
  if (!ok) p.proc.kill('SIGKILL');
  return ok;
};

/** `p`'s value, or `none` when it fails or takes over 20 s (a frozen instance's health call). */
const answered = <T>(p: Promise<T>, none: T): Promise<T> =>
  within(20_000, 'an answer', p).catch(() => none);

/** True while `s` has not exited. */
export const alive = (s: StartAll): boolean =>
  s.proc.exitCode === null && s.proc.signalCode === null;

/**
 * POSTs a start of `dag` to `s`: the run id when accepted (2xx), else undefined; throws when no
 * answer came within {@link ANSWER_MS}.
 */
export const startRun = async (s: StartAll, dag: string): Promise<string | undefined> => {
  const signal = AbortSignal.timeout(ANSWER_MS);
  const r = await callApi(`${s.url}/api/v2`, 'POST', `/dags/${dag}/start`, {}, signal).catch(
    () => undefined,
  );
  // refused or cut is an outcome; no answer at all is a server's bug, named here
  if (signal.aborted)
    throw new Error(
      `POST /dags/${dag}/start to ${s.url} (pid ${String(s.proc.pid)}, ${s.proc.signalCode ?? 'not signalled'}) got no answer within ${ANSWER_MS / 1000} s; its output:\n${s.output().slice(-5000)}`,
    );
  return r && r.status >= 200 && r.status < 300 ? (r.body.dagRunId as string) : undefined;
};

/** How long a start may go unanswered (a frozen instance answers on resuming, seconds later). */
const ANSWER_MS = 60_000;
