// The fleet bench's one-step run (bench/fleet.bench.js), before and after a change, with the two
// measured side by side: two fleets (start-all, a private redis-server, two workers each), one
// from another built worktree (the "before"), one from this one; the runs alternate between them,
// so a change of the machine's load hits both alike (on the shared 2-core host, the load moved
// the figure more than the changes did from one hour to the next). Not a `*.bench.js`: it needs
// the other worktree, built (`git worktree add --detach <dir> <commit>`, `pnpm install`, `tsc -b`).
// Usage: node bench/fleet-ab.js <before worktree> [runs each, default 100]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { freePort, startRedis } from '../packages/testkit/dist/index.js';
import { cpuMs } from './util.js';

const [before, runsArg] = process.argv.slice(2);
if (!before) throw new Error('usage: node bench/fleet-ab.js <before worktree> [runs]');
const RUNS = Number(runsArg ?? 100);
const here = resolve(fileURLToPath(new URL('..', import.meta.url)));

/** CPU ms (user + system, with reaped children: the steps) of `pid` and the processes below it. */
const treeCpuMs = (treeOf, pid) =>
  treeOf(pid).reduce((sum, p) => {
    try {
      return sum + cpuMs(p, { children: true });
    } catch {
      return sum; // gone meanwhile
    }
  }, 0);

/** A fleet of the worktree `root`: `one()` is one run's ms from POST to its final status read. */
const fleet = async (root) => {
  const u = await import(pathToFileURL(join(root, 'bench', 'util.js')).href);
  const home = mkdtempSync(join(tmpdir(), 'trellis-bench-ab-'));
  mkdirSync(join(home, 'dags'));
  writeFileSync(
    join(home, 'dags', 'one.yaml'),
    'maxActiveRuns: -1\nworkerSelector:\n  bench: "yes"\nsteps:\n  - "true"\n',
  );
  // testkit from this worktree (bench/util.js no longer has these): the same redis-server either way
  const redis = await startRedis({ appendOnly: false });
  const port = await freePort();
  const env = { SVC_REDIS_URL: redis.url, SVC_COORDINATOR_PORT: String(port) };
  const server = await u.startServer(home, env);
  const workers = [];
  for (const id of ['fleet-1', 'fleet-2'])
    workers.push(await u.startWorker(id, `127.0.0.1:${port}`, redis.url, join(home, id), 4));
  for (let i = 0; i < 200; i++) {
    const { workers: ws } = await server.get('/workers');
    if (ws.filter((w) => w.health === 'healthy').length === 2) break;
    await u.sleep(50);
  }
  const one = async () => {
    const t = performance.now();
    const { dagRunId } = await server.post('/dags/one/start', {});
    const r = await server.get(`/dag-runs/one/${dagRunId}?waitFor=final&timeout=30`);
    if (r.dagRunDetails.status !== 4)
      throw new Error(`run ${dagRunId}: status ${r.dagRunDetails.status}`);
    return performance.now() - t;
  };
  const stop = async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await server.stop();
    await redis.stop();
    rmSync(home, { recursive: true, force: true });
  };
  /** CPU ms so far of the server and of each worker (process trees). */
  const cpu = () => [server.pid, ...workers.map((w) => w.pid)].map((p) => treeCpuMs(u.treeOf, p));
  return { one, stop, cpu, pct: u.pct };
};

const a = await fleet(resolve(before));
const b = await fleet(here);
try {
  for (let i = 0; i < 10; i++) await Promise.all([a.one(), b.one()]); // warm
  const la = [];
  const lb = [];
  const load0 = loadavg()[0];
  const cpu0 = [a.cpu(), b.cpu()];
  for (let i = 0; i < RUNS; i++) {
    // one run each, in turn, the first of the pair alternating
    const [first, second] = i % 2 ? [a, b] : [b, a];
    const t1 = await first.one();
    const t2 = await second.one();
    (first === a ? la : lb).push(t1);
    (second === a ? la : lb).push(t2);
  }
  const f = (l) =>
    `p50 ${a.pct(l, 50).toFixed(1)} ms, p90 ${a.pct(l, 90).toFixed(1)} ms, p95 ${a.pct(l, 95).toFixed(1)} ms`;
  const perRun = (fl, c0) =>
    fl
      .cpu()
      .map((ms, i) => ((ms - c0[i]) / RUNS).toFixed(2))
      .join(' / ');
  const cpus = [perRun(a, cpu0[0]), perRun(b, cpu0[1])];
  console.log(
    `${RUNS} one-step runs each, alternating (load ${load0.toFixed(1)} -> ${loadavg()[0].toFixed(1)})`,
  );
  // CPU over the whole loop (both fleets idle while the other runs: heartbeats count too)
  console.log(`before (${before}): ${f(la)}; CPU ms/run server / worker 1 / worker 2: ${cpus[0]}`);
  console.log(`after  (${here}): ${f(lb)}; CPU ms/run server / worker 1 / worker 2: ${cpus[1]}`);
} finally {
  await a.stop();
  await b.stop();
}
