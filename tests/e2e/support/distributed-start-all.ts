import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnWorker, type WorkerProcess } from '@trellis/dispatch/testing';
import { freePort, startRedis, type PrivateRedis } from '@trellis/testkit';
import { openSse, type SseClient } from '../../integration/support/sse-client.js';
import { startAll, type StartAll } from './start-all.js';

/**
 * `trellis start-all` in distributed mode: a private Redis, the coordinator on a free port, a new
 * SVC_HOME, and GET /events open from the start; `trellis worker` processes join it on demand.
 */
export interface DistributedStartAll {
  readonly redis: PrivateRedis;
  /** The server's SVC_HOME (and HOME). */
  readonly home: string;
  readonly server: StartAll;
  /** `http://127.0.0.1:<port>/api/v2`. */
  readonly base: string;
  /** The server's GET /events stream. */
  readonly events: SseClient;
  /** Starts a `trellis worker` against this coordinator and Redis, in a new home of its own. */
  spawnWorker(id: string, labels: Record<string, string>): Promise<WorkerProcess>;
  /** Closes the event stream, stops the workers, the server and Redis, and removes the home. */
  stop(): Promise<void>;
}

/**
 * Starts {@link DistributedStartAll}; `prefix` names its temp folders (`<prefix>-…` for the home,
 * `<prefix>-worker-…` for each worker's).
 */
export const startDistributed = async (prefix: string): Promise<DistributedStartAll> => {
  const redis = await startRedis();
  const home = mkdtempSync(join(tmpdir(), `${prefix}-`));
  const grpcPort = await freePort();
  const server = await startAll(
    { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, SVC_HOME: home, SVC_REDIS_URL: redis.url },
    ['--coordinator-port', String(grpcPort)],
  );
  const base = `${server.url}/api/v2`;
  const events = await openSse(`${base}/events`);
  const workers: WorkerProcess[] = [];
  return {
    redis,
    home,
    server,
    base,
    events,
    spawnWorker: async (id, labels) => {
      const worker = await spawnWorker({
        id,
        labels,
        coordinator: `127.0.0.1:${grpcPort}`,
        redisUrl: redis.url,
        home: mkdtempSync(join(tmpdir(), `${prefix}-worker-`)),
      });
      workers.push(worker);
      return worker;
    },
    stop: async () => {
      events.close();
      await Promise.all(workers.map((w) => w.stop()));
      await server.stop();
      await redis.stop();
      rmSync(home, { recursive: true, force: true });
    },
  };
};
