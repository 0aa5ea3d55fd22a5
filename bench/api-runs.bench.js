// REST API on real parts (issue #4 targets, 2-core machine): GET /dag-runs?name=X p95 < 30 ms with
// 10,000 runs in history; POST .../start to a final status readable over the API, median < 20 ms;
// 200 starts of a maxActiveRuns: -1 DAG with 16 in flight, all succeeded within 2 s; step-log
// tail=100 on a 200,000-line log p95 < 20 ms.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { writeFinishedRun } from '../packages/testkit/dist/index.js';
import { flushToDisk, pct, sleep, startServer } from './util.js';

/** 10,000 finished runs over 100 DAGs. */
const seedHistory = (home) => {
  const t0 = Date.parse('2026-01-01T00:00:00Z');
  for (let d = 0; d < 100; d++) {
    const name = `hist-${String(d).padStart(3, '0')}`;
    for (let i = 0; i < 100; i++) {
      const id = `run-${String(d).padStart(3, '0')}-${String(i).padStart(4, '0')}`;
      writeFinishedRun(home, name, id, new Date(t0 + (d * 100 + i) * 60_000).toISOString());
    }
  }
};

export default async function run() {
  const home = mkdtempSync(join(tmpdir(), 'trellis-bench-api-'));
  mkdirSync(join(home, 'dags'));
  writeFileSync(join(home, 'dags', 'one.yaml'), 'maxActiveRuns: -1\nsteps:\n  - "true"\n');
  writeFileSync(
    join(home, 'dags', 'big.yaml'),
    'steps:\n  - {name: lines, command: "seq 1 200000"}\n',
  );
  seedHistory(home);
  flushToDisk();
  // The server is its own process, as in production: clients must not share its event loop.
  const server = await startServer(home);
  const { get, post } = server;
  /** Polls the run every `everyMs` (a client's view: the API is all it has). */
  const final = async (name, id, everyMs = 2) => {
    for (;;) {
      const r = await get(`/dag-runs/${name}/${id}`);
      if ([2, 3, 4, 6].includes(r.dagRunDetails?.status)) return r.dagRunDetails;
      await sleep(everyMs);
    }
  };
  try {
    await get('/dag-runs?name=hist-042'); // warm: rebuilds the index from the records once
    const lat = [];
    for (let i = 0; i < 200; i++) {
      const t = performance.now();
      const r = await get('/dag-runs?name=hist-042');
      lat.push(performance.now() - t);
      if (r.dagRuns.length !== 100) throw new Error(`expected 100 runs, got ${r.dagRuns.length}`);
    }
    console.log(
      `GET /dag-runs?name=X (100 of 10,000 runs): p50 ${pct(lat, 50).toFixed(1)} ms, p95 ${pct(lat, 95).toFixed(1)} ms (target p95 < 30 ms)`,
    );

    const one = [];
    for (let i = 0; i < 30; i++) {
      const t = performance.now();
      const { dagRunId } = await post('/dags/one/start', {});
      const r = await final('one', dagRunId);
      one.push(performance.now() - t);
      if (r.status !== 4) throw new Error(`run ended ${r.status}`);
    }
    console.log(
      `one-step DAG, POST start to final status over the API: median ${pct(one, 50).toFixed(1)} ms, p95 ${pct(one, 95).toFixed(1)} ms (target median < 20 ms)`,
    );

    // 16 clients start runs back to back (16 requests in flight); completion is read from the
    // run list (one client polling every 20 ms), not by 200 clients each polling their run.
    const t0 = performance.now();
    let next = 0;
    const ids = [];
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < 200) {
          next++;
          ids.push((await post('/dags/one/start', {})).dagRunId);
        }
      }),
    );
    let finals = [];
    for (;;) {
      const { dagRuns } = await get('/dag-runs?name=one');
      finals = dagRuns.filter((r) => ids.includes(r.dagRunId) && [2, 3, 4, 6].includes(r.status));
      if (finals.length === 200) break;
      await sleep(20);
    }
    const took = performance.now() - t0;
    const ok = finals.filter((r) => r.status === 4).length;
    console.log(
      `200 starts, 16 in flight, all final: ${took.toFixed(0)} ms, ${ok}/200 succeeded (target < 2000 ms, all succeeded)`,
    );

    const { dagRunId } = await post('/dags/big/start', {});
    await final('big', dagRunId);
    const tail = [];
    for (let i = 0; i < 100; i++) {
      const t = performance.now();
      const r = await get(`/dag-runs/big/${dagRunId}/steps/lines/log?tail=100`);
      tail.push(performance.now() - t);
      if (r.lineCount !== 100) throw new Error(`tail returned ${r.lineCount} lines`);
    }
    console.log(
      `step log tail=100 on a 200,000-line log: p50 ${pct(tail, 50).toFixed(1)} ms, p95 ${pct(tail, 95).toFixed(1)} ms (target < 20 ms)`,
    );
  } finally {
    await server.stop();
    rmSync(home, { recursive: true, force: true });
  }
}
