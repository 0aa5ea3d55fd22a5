// The fleet as an operator runs it (issue 21 rows, 2-core machine): `trellis start-all` with a
// private redis-server and two `trellis worker` processes, all real processes.
// 1. Idle: RSS summed over the server and both workers (each with whatever runs below it),
//    target under 200 MB; printed 3 s after start and again once the runs below are gone.
// 2. A one-step run through a worker, POST .../start to the final status readable over the API
//    (`?waitFor=final`, event-driven: no polling interval in the figure), p50 under 15 ms.
// Needs `tsc -b` (the built binary) and redis-server on PATH.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { freePort, startRedis } from '../packages/testkit/dist/index.js';
import { pct, privateMb, sleep, startServer, startWorker, treeMb, treeOf } from './util.js';

const RUNS = 60;

/** The machine's 1-minute load, printed beside each figure (figures here are noisy under load). */
const load = () => `load ${loadavg()[0].toFixed(1)}`;

const fleetMb = (pids) => pids.reduce((sum, pid) => sum + treeMb(pid), 0);
/** Beside the RSS: what the fleet's processes hold that they share with no other process. */
const fleetPrivate = (pids) =>
  `private ${pids
    .flatMap((pid) => treeOf(pid))
    .reduce((sum, pid) => sum + privateMb(pid), 0)
    .toFixed(1)} MB`;
const perProcess = (pids, names) =>
  pids.map((pid, i) => `${names[i]} ${treeMb(pid).toFixed(1)}`).join(', ');

/** One run of `one`: ms from POST to its final status read back, and the record. */
const oneRun = async (server) => {
  const t = performance.now();
  const { dagRunId } = await server.post('/dags/one/start', {});
  const r = await server.get(`/dag-runs/one/${dagRunId}?waitFor=final&timeout=30`);
  const ms = performance.now() - t;
  if (r.dagRunDetails.status !== 4)
    throw new Error(`run ${dagRunId} ended with status ${r.dagRunDetails.status}`);
  return ms;
};

export default async function run() {
  const home = mkdtempSync(join(tmpdir(), 'trellis-bench-fleet-'));
  mkdirSync(join(home, 'dags'));
  writeFileSync(
    join(home, 'dags', 'one.yaml'),
    'maxActiveRuns: -1\nworkerSelector:\n  bench: "yes"\nsteps:\n  - "true"\n',
  );
  const redis = await startRedis({ appendOnly: false });
  const coordinatorPort = await freePort();
  const env = { SVC_REDIS_URL: redis.url, SVC_COORDINATOR_PORT: String(coordinatorPort) };
  const server = await startServer(home, env);
  const address = `127.0.0.1:${coordinatorPort}`;
  const workers = [];
  try {
    for (const id of ['fleet-1', 'fleet-2'])
      workers.push(await startWorker(id, address, redis.url, join(home, id), 4));
    const pids = [server.pid, ...workers.map((w) => w.pid)];
    const names = ['server', 'worker 1', 'worker 2'];
    for (let i = 0; i < 200; i++) {
      const { workers: ws } = await server.get('/workers');
      if (ws.filter((w) => w.health === 'healthy').length === 2) break;
      await sleep(50);
    }
    await sleep(3000);
    console.log(
      `fleet idle (server + 2 workers, RSS summed): ${fleetMb(pids).toFixed(1)} MB 3 s after start (${perProcess(pids, names)}; ${fleetPrivate(pids)}) (target < 200 MB; ${load()})`,
    );

    for (let i = 0; i < 10; i++) await oneRun(server); // warm: queues known, code paths hot
    const lat = [];
    for (let i = 0; i < RUNS; i++) lat.push(await oneRun(server));
    const over20 = lat.filter((ms) => ms > 20).length;
    console.log(
      `one-step run through a worker, POST to final status, ${RUNS} runs: p50 ${pct(lat, 50).toFixed(1)} ms, p90 ${pct(lat, 90).toFixed(1)} ms, max ${Math.max(...lat).toFixed(1)} ms, ${over20} over 20 ms (target p50 < 15 ms; ${load()})`,
    );

    // the spawner helpers (server and workers) leave after 60 s with no step to start
    for (let s = 0; pids.some((p) => treeOf(p).length > 1) && s < 70; s++) await sleep(1000);
    console.log(
      `fleet idle after the runs, helpers gone: ${fleetMb(pids).toFixed(1)} MB (${perProcess(pids, names)}; ${fleetPrivate(pids)}) (target < 200 MB; ${load()})`,
    );
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    await server.stop();
    await redis.stop();
    rmSync(home, { recursive: true, force: true });
  }
}
