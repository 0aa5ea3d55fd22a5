// Leader take-over of replicated coordinators (issue 20, "Performance": after `kill -9` of the
// leader, the median and max over 10 trials under 5 s). Two `trellis start-all` instances on one
// private PostgreSQL (packages/testkit startPostgres), the default lease (database.leaseTtlMs
// 3000, leaseRenewMs 1000); each trial SIGKILLs the instance whose GET /health says leader and
// times until the other says leader, polling every 20 ms; a new instance then replaces the
// killed one as follower. Needs `tsc -b` (the built binary).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startPostgres } from '../packages/testkit/dist/index.js';
import { pct, sleep, startServer } from './util.js';

const TRIALS = 10;
const TARGET_MS = 5000;

const load = () => `load ${loadavg()[0].toFixed(2)}`;

const roleOf = async (s) => (await s.get('/health').catch(() => ({}))).role;

/** Resolves with the instance of `list` that says leader (polling every 20 ms). */
const untilLeader = async (list) => {
  for (;;) {
    const roles = await Promise.all(list.map(roleOf));
    const i = roles.indexOf('leader');
    if (i >= 0) return list[i];
    await sleep(20);
  }
};

const killed = (pid) =>
  new Promise((resolve) => {
    process.kill(pid, 'SIGKILL');
    const t = setInterval(() => {
      try {
        process.kill(pid, 0);
      } catch {
        clearInterval(t);
        resolve();
      }
    }, 5);
  });

export default async function run() {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-bench-ha-'));
  const pg = await startPostgres();
  const url = await pg.createDatabase('ha_takeover');
  let n = 0;
  const start = () => {
    const home = join(dir, `home-${++n}`);
    mkdirSync(home);
    return startServer(home, { SVC_DATABASE_URL: url });
  };
  const live = [await start()];
  try {
    await untilLeader(live);
    live.push(await start());
    const times = [];
    for (let t = 0; t < TRIALS; t++) {
      const leader = await untilLeader(live);
      const other = live.find((s) => s !== leader);
      const t0 = performance.now();
      await killed(leader.pid);
      await untilLeader([other]);
      const ms = performance.now() - t0;
      times.push(ms);
      console.log(`trial ${t + 1}: ${(ms / 1000).toFixed(2)} s (${load()})`);
      live.splice(live.indexOf(leader), 1);
      live.push(await start());
    }
    console.log(
      `take-over after kill -9, ${TRIALS} trials: median ${(pct(times, 50) / 1000).toFixed(2)} s, max ${(Math.max(...times) / 1000).toFixed(2)} s (target < ${TARGET_MS / 1000} s; lease TTL 3 s, renewal 1 s; ${load()})`,
    );
  } finally {
    for (const s of live) await s.stop().catch(() => undefined);
    await pg.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
