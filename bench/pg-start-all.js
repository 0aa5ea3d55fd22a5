// `trellis start-all` on the file store and on the PostgreSQL store (SVC_DATABASE_URL), side by
// side (issue 20, "Performance"): a one-step run POST to final status, and GET /dag-runs?name=X
// over the 10,000-run history pg-store.bench.js seeded in both stores. Used by pg-store.bench.js.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pct, sleep, startServer } from './util.js';

const STARTS = 40;
const LISTINGS = 60;
const load = () => `load ${loadavg()[0].toFixed(2)}`;

const writeOneStepDag = (home) => {
  mkdirSync(join(home, 'dags'), { recursive: true });
  writeFileSync(join(home, 'dags', 'one.yaml'), 'maxActiveRuns: -1\nsteps:\n  - "true"\n');
};

/** POST start to a final status read over the API (polled every 2 ms), `STARTS` times; ms. */
const postToFinal = async ({ get, post }) => {
  const xs = [];
  for (let i = 0; i < STARTS + 3; i++) {
    const t0 = performance.now();
    const { dagRunId } = await post('/dags/one/start', {});
    for (;;) {
      const r = await get(`/dag-runs/one/${dagRunId}`);
      const status = r.dagRunDetails?.status;
      if ([2, 3, 6].includes(status)) throw new Error(`run ${dagRunId} ended ${status}`);
      if (status === 4) break;
      await sleep(2);
    }
    if (i >= 3) xs.push(performance.now() - t0); // 3 warm-ups
  }
  return xs;
};

/** CPU time (user + system) the process `pid` has used, in ms (from /proc; 10 ms ticks). */
const cpuMs = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
};

/**
 * GET /dag-runs?name=<name> `LISTINGS` times after 3 warm-ups, each answer of `expect` runs: ms
 * from the request to the answer's last byte (the server and the wire; the client's JSON.parse
 * of the ~4 MB answer is timed apart, in `parseMs`), with the server's CPU per listing (steadier
 * than latency on a loaded machine).
 */
export const listing = async ({ timedGet, pid }, name, expect) => {
  const xs = [];
  const parse = [];
  let cpu0 = 0;
  for (let i = 0; i < LISTINGS + 3; i++) {
    if (i === 3) cpu0 = cpuMs(pid);
    const { body, ms, parseMs } = await timedGet(`/dag-runs?name=${name}`);
    if (i >= 3) xs.push(ms);
    if (i >= 3) parse.push(parseMs);
    if (body.dagRuns.length !== expect)
      throw new Error(`expected ${expect} runs, got ${body.dagRuns.length}`);
  }
  xs.serverCpuMs = (cpuMs(pid) - cpu0) / LISTINGS;
  xs.parseMs = pct(parse, 50);
  return xs;
};

export const figures = (xs) =>
  `median ${pct(xs, 50).toFixed(1)} ms, p95 ${pct(xs, 95).toFixed(1)} ms`;

/**
 * Both servers in turn (one at a time: two cores): files over `filesHome` (its data/ seeded
 * by the caller), PostgreSQL over `databaseUrl` (seeded the same), each with DAG `one`.
 */
export const startAllSideBySide = async ({ filesHome, databaseUrl, dagName, runs }) => {
  const pgHome = mkdtempSync(join(tmpdir(), 'trellis-bench-pg-home-'));
  writeOneStepDag(filesHome);
  writeOneStepDag(pgHome);
  const results = {};
  try {
    // the seeded history is months old: retention would delete it while it is listed
    const keep = { SVC_HIST_RETENTION_DAYS: '3650' };
    for (const [label, home, env] of [
      ['files', filesHome, keep],
      ['PostgreSQL', pgHome, { ...keep, SVC_DATABASE_URL: databaseUrl }],
    ]) {
      const server = await startServer(home, env);
      try {
        const starts = await postToFinal(server);
        const lists = await listing(server, dagName, runs);
        results[label] = { starts, lists };
        console.log(
          `start-all on ${label}: one-step run POST to final over the API, ${STARTS} runs: ${figures(starts)} (${load()})`,
        );
        console.log(
          `start-all on ${label}: GET /dag-runs?name=${dagName} (all ${runs}) over HTTP, to the last byte: ${figures(lists)}, server CPU ${lists.serverCpuMs.toFixed(1)} ms a listing, client JSON.parse ${lists.parseMs.toFixed(1)} ms apart (target p95 < ${label === 'files' ? '15 ms, issue 21' : '20 ms, issue 20'}; ${load()})`,
        );
      } finally {
        await server.stop();
      }
    }
    const ratio = pct(results.PostgreSQL.starts, 50) / pct(results.files.starts, 50);
    console.log(
      `one-step run POST-to-final, PostgreSQL median / files median: ${ratio.toFixed(2)}x (target < 1.5x; ${load()})`,
    );
  } finally {
    rmSync(pgHome, { recursive: true, force: true });
  }
};
