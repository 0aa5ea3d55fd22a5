import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startRedis, type PrivateRedis } from '@trellis/dispatch/testing';
import { moduleLog } from './support/module-log.js';
import { BIN } from './support/start-all.js';

/*
 * What a real `trellis worker` process loads (issue 21: the idle fleet under 200 MB; every module
 * loaded stays in its heap for good). A module hook preloaded into the worker writes down each
 * ES module it resolves; the worker executes runs, so it loads the engine, the executors, gRPC's
 * client and BullMQ, and none of the server's parts. The preload also notes the size of V8's young
 * generation (new space) when it ran and when the worker exits.
 */

/** Modules a worker has no use for, by path under the repository (or node_modules package). */
const NOT_IN_A_WORKER = [
  'packages/coordinator/dist/server/coordinator.js', // the coordinator server
  'packages/coordinator/dist/fleet/', // its shared view of the fleet
  'packages/dispatch/dist/remote/bullmq-dispatcher.js', // the coordinator's side of BullMQ
  'packages/store/dist/runs/', // the run store (a worker reports to the coordinator)
  'packages/store/dist/dags/', // the DAG store
  'packages/contract/', // the API's wire schemas
  'packages/api/',
  'packages/services/',
  'packages/scheduler/',
  'packages/store-pg/',
  'packages/web/',
  'node_modules/express/',
  'node_modules/re2js/',
];

/**
 * BullMQ's files a worker has no use for: its index loads them (a PostgreSQL backend and its
 * valkey-glide client, about 1.2 MB of heap), its worker class does not.
 */
const NOT_FROM_BULLMQ = [
  'bullmq/dist/cjs/index.js',
  'bullmq/dist/cjs/postgres/',
  'bullmq/dist/cjs/classes/valkey-glide-client.js',
];

/**
 * The preload's notes at exit: the young generation (`<bytes at start> <bytes at exit>`) in
 * `young`, and the CommonJS files loaded (Node's require cache, one path a line) in `cjs`.
 */
const exitNotes = (
  young: string,
  cjs: string,
): string => `import { getHeapSpaceStatistics } from 'node:v8';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
const cache = createRequire(import.meta.url).cache;
const youngSize = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
const first = youngSize();
process.on('exit', () => {
  writeFileSync(${JSON.stringify(young)}, first + ' ' + youngSize());
  writeFileSync(${JSON.stringify(cjs)}, Object.keys(cache).join('\\n'));
});
`;

let redis: PrivateRedis;
let dir: string;

beforeAll(async () => {
  redis = await startRedis();
  dir = mkdtempSync(join(tmpdir(), 'trellis-worker-modules-'));
});

afterAll(async () => {
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface AWorker {
  /** The module URLs it resolved, by path under the repository. */
  readonly modules: string[];
  /** The CommonJS files it loaded (absolute paths). */
  readonly cjs: string[];
  /** Bytes of its young generation before the binary ran, and when it exited. */
  readonly young: { readonly first: number; readonly last: number };
}

/** Starts a worker with the hook, awaits its start line, stops it: what it loaded and grew. */
const aWorker = async (): Promise<AWorker> => {
  const youngLog = join(dir, 'young.txt');
  const cjsLog = join(dir, 'cjs.txt');
  const log = moduleLog(dir, exitNotes(youngLog, cjsLog));
  const coordinator = `127.0.0.1:${await freePort()}`; // none listens: loading comes first
  const worker = spawn(
    process.execPath,
    ['--import', log.preload, BIN, 'worker', '--coordinator', coordinator, '--labels', 'a=b'],
    {
      env: {
        PATH: '/usr/local/bin:/usr/bin:/bin',
        HOME: dir,
        SVC_HOME: dir,
        SVC_REDIS_URL: redis.url,
        ...log.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  worker.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const exited = once(worker, 'exit');
  await new Promise<void>((resolve, reject) => {
    worker.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('started')) resolve();
    });
    void exited.then(() => reject(new Error(`the worker exited before it started:\n${out}`)));
  });
  worker.kill('SIGTERM');
  await exited;
  const modules = log.loaded();
  const [first = 0, last = 0] = readFileSync(youngLog, 'utf8').split(' ').map(Number);
  const cjs = readFileSync(cjsLog, 'utf8').split('\n');
  return { modules, cjs, young: { first, last } };
};

let worker: Promise<AWorker> | undefined;
/** One worker for the tests below (each asks; the first starts it). */
const theWorker = (): Promise<AWorker> => (worker ??= aWorker());

describe('a trellis worker process', () => {
  it('loads what executes runs, and none of the coordinator server, the stores or the API', async () => {
    const loaded = (await theWorker()).modules;
    // the hook saw the worker's own modules: an empty list proves nothing
    expect(loaded).toContain('packages/dispatch/dist/worker/worker-agent.js');
    expect(loaded).toContain('packages/engine/dist/run/dag-runner.js');
    const extra = loaded.filter((m) => NOT_IN_A_WORKER.some((p) => m.includes(p)));
    expect(extra).toEqual([]);
  });

  it("loads BullMQ's worker class from its own file, without the index's PostgreSQL backend", async () => {
    const { cjs } = await theWorker();
    expect(cjs.some((f) => f.endsWith('bullmq/dist/cjs/classes/worker.js'))).toBe(true);
    expect(cjs.filter((f) => NOT_FROM_BULLMQ.some((p) => f.includes(p)))).toEqual([]);
  });

  it('keeps its young generation small while its modules load (the binary tunes the heap first)', async () => {
    const { first, last } = (await theWorker()).young;
    expect(first).toBeGreaterThan(0); // the preload saw the heap
    // V8 doubles it once whatever the flag (1 -> 2 MB); loading the CLI's modules before the
    // flag was set grew it to 8 MB, kept until the idle trim's settling GC
    // (packages/cli/src/wiring/daemon-heap.ts)
    expect(last).toBeLessThanOrEqual(2 * first);
  });
});
