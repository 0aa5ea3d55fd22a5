import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  freePort,
  spawnWorker,
  startRedis,
  type PrivateRedis,
  type WorkerProcess,
} from '@trellis/dispatch/testing';
import { startAll, type StartAll } from '../../e2e/support/start-all.js';
import { Ledger } from './ledger.js';

export interface FleetWorkerOptions {
  readonly labels: Readonly<Record<string, string>>;
  readonly concurrency?: number;
  /** How long a SIGTERM drain may take, in seconds. */
  readonly graceSec: number;
}

/**
 * The set-up the fleet's fault tests share: a home and a worker home in temp folders, a private
 * Redis, `trellis start-all` on it with a free gRPC port, the workers started against it, and a
 * ledger in the home. `dispose` stops (SIGKILL) whatever is still alive and removes the folders.
 */
export class FleetFixture {
  readonly home = mkdtempSync(join(tmpdir(), 'trellis-faults-fleet-'));
  readonly workerHome = mkdtempSync(join(tmpdir(), 'trellis-faults-worker-'));
  readonly ledger = new Ledger(this.home);
  /** Every worker started, by id; a restarted worker replaces its predecessor. */
  readonly workers = new Map<string, WorkerProcess>();
  #server: StartAll | undefined;

  private constructor(
    readonly redis: PrivateRedis,
    readonly grpcPort: number,
  ) {}

  static async create(): Promise<FleetFixture> {
    const fixture = new FleetFixture(await startRedis(), await freePort());
    await fixture.startServer();
    return fixture;
  }

  get server(): StartAll {
    if (!this.#server) throw new Error('the server is not started');
    return this.#server;
  }

  /** The REST API's base URL (`.../api/v2`). */
  readonly base = (): string => `${this.server.url}/api/v2`;

  /** Every process's output, for a failing assertion's message. */
  readonly context = (): string =>
    [
      this.#server?.output() ?? '',
      ...[...this.workers.values()].map((w) => `--- ${w.id}\n${w.output()}`),
    ].join('\n');

  async startServer(): Promise<void> {
    this.#server = await startAll(
      {
        PATH: '/usr/local/bin:/usr/bin:/bin',
        HOME: this.home,
        SVC_HOME: this.home,
        SVC_REDIS_URL: this.redis.url,
      },
      ['--coordinator-port', String(this.grpcPort)],
    );
  }

  async killServer(): Promise<void> {
    const proc = this.server.proc;
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    proc.kill('SIGKILL');
    await once(proc, 'exit');
  }

  async startWorker(id: string, opts: FleetWorkerOptions): Promise<WorkerProcess> {
    const w = await spawnWorker({
      id,
      labels: { ...opts.labels },
      coordinator: `127.0.0.1:${this.grpcPort}`,
      redisUrl: this.redis.url,
      concurrency: opts.concurrency ?? 1,
      graceSec: opts.graceSec,
      home: this.workerHome,
    });
    this.workers.set(id, w);
    return w;
  }

  async dispose(): Promise<void> {
    this.ledger.release();
    this.ledger.dispose();
    const alive = [...this.workers.values()].filter(
      (w) => w.proc.exitCode === null && !w.proc.signalCode,
    );
    await Promise.all(alive.map((w) => (w.kill('SIGKILL'), once(w.proc, 'exit'))));
    if (this.#server) await this.killServer();
    await this.redis.stop();
    rmSync(this.home, { recursive: true, force: true, maxRetries: 5 });
    rmSync(this.workerHome, { recursive: true, force: true, maxRetries: 5 });
  }
}
