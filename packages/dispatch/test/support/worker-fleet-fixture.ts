import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { DagRunRecord } from '@trellis/spec';
import { startCoordinatorSide, type CoordinatorSide } from './fleet.js';
import { startRedis, type PrivateRedis } from '@trellis/testkit';
import { spawnWorker, type WorkerProcess } from './worker-process.js';

/**
 * Distributed mode with real processes on loopback (issue 6, Tests): a private redis-server, the
 * coordinator and dispatcher in this process over a file store, and `trellis worker` processes
 * (the built binary) with different labels. One per test file; the workers a test starts stop
 * after it.
 */
export interface WorkerFleetFixture {
  readonly redis: PrivateRedis;
  readonly side: CoordinatorSide;
  /** Starts a `trellis worker` process against this coordinator (stopped after the test). */
  readonly worker: (
    id: string,
    labels: Record<string, string>,
    concurrency?: number,
  ) => Promise<WorkerProcess>;
  /** Resolves once the coordinator has a heartbeat from `id`. */
  readonly joined: (id: string) => Promise<void>;
  /** Resolves with the first record update of `id` that satisfies `pred`. */
  readonly update: (id: string, pred: (r: DagRunRecord) => boolean) => Promise<DagRunRecord>;
  /** The home directory of the workers started by `worker` (their outbox journals are under it). */
  readonly workerHome: string;
  /** A new run id, unique in the test file. */
  readonly newId: () => string;
}

/** A DAG with the given worker selector and one step per command. */
export const dagYaml = (
  name: string,
  selector: Record<string, string>,
  steps: string[],
): string => {
  const sel = Object.entries(selector);
  return [
    `name: ${name}`,
    ...(sel.length > 0 ? ['workerSelector:', ...sel.map(([k, v]) => `  ${k}: "${v}"`)] : []),
    'steps:',
    ...steps.map((s) => `  - ${JSON.stringify(s)}`),
    '',
  ].join('\n');
};

/** Registers beforeAll/afterEach/afterAll hooks in the calling test file; call at its top level. */
export const useWorkerFleet = (): WorkerFleetFixture => {
  let redis: PrivateRedis | undefined;
  let side: CoordinatorSide | undefined;
  let workerHome = '';
  const workers: WorkerProcess[] = [];
  let seq = 0;

  beforeAll(async () => {
    redis = await startRedis();
    side = await startCoordinatorSide(redis);
    workerHome = mkdtempSync(join(tmpdir(), 'trellis-worker-home-'));
  }, 30_000);

  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
  }, 30_000);

  afterAll(async () => {
    await side?.close();
    await redis?.stop();
    if (workerHome) rmSync(workerHome, { recursive: true, force: true });
  }, 30_000);

  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('useWorkerFleet: the fleet exists inside tests only');
    return value;
  };
  const fixture: WorkerFleetFixture = {
    get redis() {
      return started(redis);
    },
    get side() {
      return started(side);
    },
    get workerHome() {
      return started(workerHome || undefined);
    },
    worker: async (id, labels, concurrency = 2) => {
      const w = await spawnWorker({
        id,
        labels,
        concurrency,
        coordinator: `127.0.0.1:${fixture.side.coordinator.port}`,
        redisUrl: fixture.redis.url,
        home: workerHome,
      });
      workers.push(w);
      return w;
    },
    joined: (id) =>
      new Promise((resolve) => {
        const has = (): boolean =>
          fixture.side.coordinator.workers().some((w) => w.id === id && w.health === 'healthy');
        if (has()) return resolve();
        const off = fixture.side.coordinator.onCapacity(() => {
          if (has()) {
            off();
            resolve();
          }
        });
      }),
    update: (id, pred) =>
      new Promise((resolve) => {
        const found = fixture.side.updates.find((u) => u.dagRunId === id && pred(u));
        if (found) return resolve(found);
        const timer = setInterval(() => {
          const f = fixture.side.updates.find((u) => u.dagRunId === id && pred(u));
          if (f) {
            clearInterval(timer);
            resolve(f);
          }
        }, 20);
      }),
    newId: () => `run-${++seq}`,
  };
  return fixture;
};
