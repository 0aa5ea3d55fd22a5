// Memory of `trellis start-all` (issue 21 targets, 2-core machine): idle, the whole process
// tree, under 80 MB; and as history grows, RSS 3 s after the last of N runs of one DAG, under
// 120 MB at 20,000 runs and flat in the number of runs kept. RSS is read from /proc for the
// server and every process under it (the spawner helper while it runs: it exits after 60 s
// with no step to start). Beside the server's RSS: its JS heap, used of total (`GET /metrics`),
// to tell what the heap holds from what the process keeps beyond it. `node bench/run.js memory
// 1000,5000` measures at other numbers of runs.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rssMb, sleep, startServer, treeMb, treeOf } from './util.js';

const STEPS = (process.argv[3] ?? '1000,10000,20000').split(',').map(Number);
const IN_FLIGHT = 8;

/** The server's JS heap, `used/total MB`, from its metrics. */
const heapOf = async (server) => {
  // total first: its collection sets both (prom-client's heap gauges)
  const names = 'nodejs_heap_size_total_bytes,nodejs_heap_size_used_bytes';
  const text = await (await fetch(`${server.base}/metrics?name=${names}`)).text();
  const mb = (name) => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1]) / 1e6;
  return `${mb('nodejs_heap_size_used_bytes').toFixed(1)}/${mb('nodejs_heap_size_total_bytes').toFixed(1)}`;
};

/** Runs `count` more runs of DAG `one`, IN_FLIGHT at a time, each awaited to its end. */
const runMore = async (server, count) => {
  let left = count;
  const client = async () => {
    while (left > 0) {
      left--;
      const { dagRunId } = await server.post('/dags/one/start', {});
      const r = await server.get(`/dag-runs/one/${dagRunId}?waitFor=final&timeout=60`);
      if (r.dagRunDetails.status !== 4)
        throw new Error(`run ${dagRunId}: status ${r.dagRunDetails.status}`);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, client));
};

export default async function run() {
  const home = mkdtempSync(join(tmpdir(), 'trellis-bench-memory-'));
  mkdirSync(join(home, 'dags'));
  writeFileSync(
    join(home, 'dags', 'one.yaml'),
    `maxActiveRuns: ${IN_FLIGHT}\nsteps:\n  - {name: a, command: "true"}\n`,
  );
  const server = await startServer(home);
  try {
    await sleep(3000);
    const withSpawner = treeMb(server.pid);
    for (let s = 0; treeOf(server.pid).length > 1 && s < 70; s++) await sleep(1000);
    console.log(
      `idle RSS, whole process tree: ${treeMb(server.pid).toFixed(1)} MB once the spawner left (target < 80 MB); ${withSpawner.toFixed(1)} MB with it, 3 s after start`,
    );
    let done = 0;
    const rows = [];
    for (const n of STEPS) {
      await runMore(server, n - done);
      done = n;
      await sleep(3000);
      // the server alone beside the tree: the spawner helper (~50 MB, ~40 of them the node
      // binary's pages it shares with the server) stays until 60 s without a step
      const tree = treeMb(server.pid);
      const rss = rssMb(server.pid);
      const heap = await heapOf(server);
      // and once the server's settling GC has run (wiring/daemon-heap.ts: 12 quiet 500 ms checks
      // after the first trim), to tell the garbage of the burst from what the history holds
      await sleep(9000);
      rows.push(
        `${n}: ${tree.toFixed(1)} MB (server ${rss.toFixed(1)}, its heap ${heap} MB used/total;` +
          ` 12 s after: server ${rssMb(server.pid).toFixed(1)}, heap ${await heapOf(server)})`,
      );
    }
    console.log(
      `RSS 3 s after the last of N runs (whole tree): ${rows.join(', ')} (target < 120 MB at 20,000, flat)`,
    );
  } finally {
    await server.stop();
    rmSync(home, { recursive: true, force: true });
  }
}
