// GET /dags/{fileName}/dag-runs (the run history grid, issue 21) on two builds side by side: A
// and B are `trellis start-all` binaries (A: the build to compare with, B by default this tree's), each
// over its own copy of a home with the dag-table bench's DAG `dag-0000` and its 30 runs. Rounds
// alternate A and B, so a change of the machine's load hits them alike; each round takes
// SAMPLES requests per server and reads the server's CPU time from /proc. Printed per build:
// median over rounds of the p50 as dag-table.bench.js measures it (to the client's parsed
// answer), of the p50 to the last byte, and of the server CPU a request, beside the load.
// Not a `*.bench.js`: it compares builds. Needs `tsc -b` in both trees.
// Usage: node bench/dag-runs-ab.js [rounds, default 7] [warm-up requests, default 500;
// dag-table.bench.js makes 1] [other DAG files with one run each, default 0; dag-table.bench.js
// has 1,000] binA [binB]
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { writeFinishedRun } from '../packages/testkit/dist/index.js';
import { cpuMs, flushToDisk, pct, startServer } from './util.js';

const [roundsArg, warmupArg, othersArg, binA, binB] = process.argv.slice(2);
const usage = () => {
  throw new Error('usage: node bench/dag-runs-ab.js rounds warm-up others binA [binB]');
};
const ROUNDS = Number(roundsArg ?? 7);
const SAMPLES = 400;
const WARMUP = Number(warmupArg ?? 500);
const OTHERS = Number(othersArg ?? 0);
const RUNS = 30;
const BINS = {
  A: binA ?? usage(),
  B: binB ?? fileURLToPath(new URL('../packages/cli/bin/trellis.js', import.meta.url)),
};
const PATH = '/dags/dag-0000/dag-runs';

const seed = (home) => {
  mkdirSync(join(home, 'dags'), { recursive: true });
  writeFileSync(
    join(home, 'dags', 'dag-0000.yaml'),
    'steps:\n  - name: extract\n    command: ./extract.sh\n  - name: load\n    command: ./load.sh\n    depends: [extract]\n',
  );
  const t0 = Date.now() - 2 * 86_400_000;
  for (let i = 1; i <= OTHERS; i++) {
    const name = `dag-${String(i).padStart(4, '0')}`;
    writeFileSync(join(home, 'dags', `${name}.yaml`), 'steps:\n  - name: a\n    command: "true"\n');
    writeFinishedRun(home, name, 'run-0', new Date(t0 + i * 60_000).toISOString());
  }
  for (let r = 0; r < RUNS; r++)
    writeFinishedRun(home, 'dag-0000', `run-${r}`, new Date(t0 - r * 60_000).toISOString());
};

const round = async (s) => {
  const parsed = [];
  const wire = [];
  const cpu0 = cpuMs(s.pid);
  for (let i = 0; i < SAMPLES; i++) {
    const t = performance.now();
    const { body, ms } = await s.timedGet(PATH);
    parsed.push(performance.now() - t);
    wire.push(ms);
    if (i === 0 && body.dagRuns.length !== RUNS) throw new Error(`${body.dagRuns.length} runs`);
  }
  return {
    p50: pct(parsed, 50),
    wire: pct(wire, 50),
    cpu: (cpuMs(s.pid) - cpu0) / SAMPLES,
    load: loadavg()[0],
  };
};

const seedHome = mkdtempSync(join(tmpdir(), 'trellis-dagruns-ab-'));
const homes = {};
const servers = {};
try {
  seed(seedHome);
  for (const k of Object.keys(BINS)) {
    homes[k] = `${seedHome}-${k}`;
    cpSync(seedHome, homes[k], { recursive: true });
  }
  flushToDisk();
  for (const k of Object.keys(BINS)) servers[k] = await startServer(homes[k], {}, BINS[k]);
  for (const k of Object.keys(BINS)) for (let i = 0; i < WARMUP; i++) await servers[k].get(PATH);
  const results = { A: [], B: [] };
  for (let r = 0; r < ROUNDS; r++)
    for (const k of r % 2 === 0 ? ['A', 'B'] : ['B', 'A']) results[k].push(await round(servers[k]));
  for (const k of Object.keys(BINS)) {
    const xs = results[k];
    const med = (f) => pct(xs.map(f), 50);
    console.log(
      `${k} ${BINS[k]}: p50 ${med((x) => x.p50).toFixed(3)} ms (to the last byte ${med((x) => x.wire).toFixed(3)} ms), server CPU ${med((x) => x.cpu).toFixed(3)} ms a request; ${ROUNDS} rounds of ${SAMPLES}, load ${Math.min(...xs.map((x) => x.load)).toFixed(2)}-${Math.max(...xs.map((x) => x.load)).toFixed(2)}`,
    );
  }
} finally {
  for (const s of Object.values(servers)) await s.stop();
  for (const h of [seedHome, ...Object.values(homes)]) rmSync(h, { recursive: true, force: true });
}
