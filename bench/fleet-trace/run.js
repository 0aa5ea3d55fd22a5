// The fleet bench's one-step run, traced per segment (README.md in this folder): the fleet of
// bench/fleet.bench.js (start-all, a private redis-server, two workers), RUNS runs after 10 warm
// ones, then for each pair of consecutive trace points the median and p90 over the runs,
// largest total first. Needs trace.patch applied and built (`tsc -b`); a second argument `off`
// passes FP_OFF=1 to the server, for an A/B switch a measurement adds.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, readdirSync, readFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, pct, sleep, startRedis, startServer, startWorker } from '../util.js';

const RUNS = Number(process.argv[2] ?? 40);
const now = () => performance.timeOrigin + performance.now();
for (const f of readdirSync('/tmp/fptrace'))
  if (f.endsWith('.log')) rmSync(join('/tmp/fptrace', f));
writeFileSync('/tmp/fptrace/on', '');
const home = mkdtempSync(join(tmpdir(), 'trellis-bench-fleet-'));
mkdirSync(join(home, 'dags'));
writeFileSync(
  join(home, 'dags', 'one.yaml'),
  'maxActiveRuns: -1\nworkerSelector:\n  bench: "yes"\nsteps:\n  - "true"\n',
);
const redis = await startRedis(home);
const coordinatorPort = await freePort();
const server = await startServer(home, {
  ...(process.argv[3] === 'off' ? { FP_OFF: '1' } : {}),
  SVC_REDIS_URL: redis.url,
  SVC_COORDINATOR_PORT: String(coordinatorPort),
});
const workers = [];
const client = {};
try {
  for (const id of ['fleet-1', 'fleet-2'])
    workers.push(
      await startWorker(id, `127.0.0.1:${coordinatorPort}`, redis.url, join(home, id), 4),
    );
  for (let i = 0; i < 200; i++) {
    const { workers: ws } = await server.get('/workers');
    if (ws.filter((w) => w.health === 'healthy').length === 2) break;
    await sleep(50);
  }
  await sleep(1000);
  const lat = [];
  for (let i = 0; i < RUNS + 10; i++) {
    const t0 = now();
    const { dagRunId } = await server.post('/dags/one/start', {});
    const t1 = now();
    const r = await server.get(`/dag-runs/one/${dagRunId}?waitFor=final&timeout=30`);
    const t2 = now();
    if (r.dagRunDetails.status !== 4) throw new Error('status ' + r.dagRunDetails.status);
    if (i >= 10) {
      client[dagRunId] = { t0, t1, t2 };
      lat.push(t2 - t0);
    }
  }
  console.log(
    `p50 ${pct(lat, 50).toFixed(1)} p90 ${pct(lat, 90).toFixed(1)} (load ${loadavg()[0].toFixed(1)})`,
  );
} finally {
  rmSync('/tmp/fptrace/on');
  await Promise.all(workers.map((w) => w.stop()));
  await server.stop();
  redis.stop();
  rmSync(home, { recursive: true, force: true });
}
// parse
const ev = {};
for (const f of readdirSync('/tmp/fptrace').filter((f) => f.endsWith('.log')))
  for (const line of readFileSync(join('/tmp/fptrace', f), 'utf8').split('\n')) {
    const [label, id, t, extra] = line.split(' ');
    if (!label) continue;
    (ev[id] ??= []).push({ label: extra ? `${label}[${extra}]` : label, t: Number(t) });
  }
const segs = {};
for (const [id, c] of Object.entries(client)) {
  const list = [
    { label: 'POST', t: c.t0 },
    ...(ev[id] ?? []),
    { label: 'POSTed', t: c.t1 },
    { label: 'GOT', t: c.t2 },
  ].sort((a, b) => a.t - b.t);
  for (let i = 1; i < list.length; i++) {
    const k = `${list[i - 1].label} -> ${list[i].label}`;
    (segs[k] ??= []).push(list[i].t - list[i - 1].t);
  }
}
const rows = Object.entries(segs)
  .filter(([, v]) => v.length >= RUNS / 4)
  .sort((a, b) => pct(b[1], 50) * b[1].length - pct(a[1], 50) * a[1].length);
for (const [k, v] of rows)
  console.log(
    `${k.padEnd(60)} n=${String(v.length).padStart(3)} p50 ${pct(v, 50).toFixed(2)} p90 ${pct(v, 90).toFixed(2)}`,
  );
