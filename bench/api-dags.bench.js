// GET /dags on 1,000 DAG files (issue #4 target, 2-core machine: p95 < 20 ms for perPage=100; the
// peer needs about 1 s). The express app over a real socket on 127.0.0.1, the real FsDagStore
// and FsRunStore with 10,000 runs in history (10 per DAG) for `latestDAGRun`, read from the run
// index (`listRuns({name, limit: 1})`); the last line compares reading each full record instead.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createHttpApp, noAuth } from '../packages/api/dist/index.js';
import { dagRoutes } from '../packages/api/dist/routes/dags.routes.js';
import { systemClock } from '../packages/core/dist/index.js';
import { FsDagStore } from '../packages/store/dist/index.js';
import { FsRunStore } from '../packages/store/dist/index.js';
import { writeFinishedRun } from '../packages/testkit/dist/index.js';
import { flushToDisk, jsonClient, pct } from './util.js';

const FILES = 1000;
const RUNS_PER_DAG = 10;
const SAMPLES = 200;

/** A typical DAG: schedule in a zone, tags, params, env, 10 steps with policies, a handler. */
const typical = (i) => `description: typical DAG number ${i}
schedule: "CRON_TZ=Europe/Berlin ${i % 60} ${i % 24} * * *"
tags: [${i % 2 ? 'etl' : 'report'}, team-${i % 7}]
params:
  - DAY: yesterday
env:
  - OUT: /tmp/out-${i}
steps:
${Array.from(
  { length: 10 },
  (_, s) => `  - name: step-${s}
    command: ./run.sh --part ${s} --day \${DAY}
    retryPolicy:
      limit: 2
      intervalSec: 5`,
).join('\n')}
handlerOn:
  failure:
    command: ./notify.sh failed
`;

const seed = (home) => {
  const dagsDir = join(home, 'dags');
  mkdirSync(dagsDir);
  const t0 = Date.parse('2026-01-01T00:00:00Z');
  for (let d = 0; d < FILES; d++) {
    const name = `dag-${String(d).padStart(4, '0')}`;
    writeFileSync(join(dagsDir, `${name}.yaml`), typical(d));
    for (let r = 0; r < RUNS_PER_DAG; r++) {
      const at = new Date(t0 + (d * RUNS_PER_DAG + r) * 60_000).toISOString();
      writeFinishedRun(home, name, `run-${r}`, at);
    }
  }
  return dagsDir;
};

export default async function run() {
  const home = mkdtempSync(join(tmpdir(), 'trellis-bench-dags-'));
  const dagsDir = seed(home);
  flushToDisk();
  const store = new FsRunStore({
    dataDir: join(home, 'data'),
    logDir: join(home, 'logs'),
    clock: systemClock,
  });
  const fromIndex = async (name) => (await store.listRuns({ name, limit: 1 }))[0];
  const fromRecord = (name) =>
    store.latestRun(name).catch((e) => (e?.code === 'not_found' ? undefined : Promise.reject(e)));
  let latestRun = fromIndex;
  const dags = new FsDagStore({
    dagsDir,
    suspendDir: join(home, 'data', 'suspend'),
    clock: systemClock,
    latestRun: (name) => latestRun(name),
  });
  const deps = {
    version: 'bench',
    startedAt: systemClock.now(),
    clock: systemClock,
    dags,
    runs: {},
    reads: {},
    auth: noAuth,
    log: { warn: () => undefined, error: (m, e) => console.error(m, e) },
    health: async () => ({}),
    metrics: async () => ({ contentType: 'text/plain', body: '' }),
  };
  const server = createHttpApp(deps, [dagRoutes]).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const client = jsonClient(`http://127.0.0.1:${server.address().port}/api/v2`);
  const fetchJson = client.get;
  const measure = async (path, check) => {
    const lat = [];
    for (let i = 0; i < SAMPLES; i++) {
      const t = performance.now();
      const body = await fetchJson(path);
      lat.push(performance.now() - t);
      check(body);
    }
    return `p50 ${pct(lat, 50).toFixed(1)} ms, p95 ${pct(lat, 95).toFixed(1)} ms`;
  };
  const page = (expectFirst) => (b) => {
    if (b.dags.length !== 100 || b.pagination.totalRecords !== FILES || b.errors.length > 0)
      throw new Error(
        `unexpected answer: ${b.dags.length} DAGs, ${b.pagination.totalRecords} total, errors ${b.errors}`,
      );
    if (b.dags[0].latestDAGRun.dagRunId !== 'run-9')
      throw new Error(`latest run: ${JSON.stringify(b.dags[0].latestDAGRun)}`);
    if (expectFirst && b.dags[0].fileName !== expectFirst)
      throw new Error(`first: ${b.dags[0].fileName}`);
  };
  try {
    const t = performance.now();
    await fetchJson('/dags?perPage=100'); // warm-up: parses every file once, builds the run indexes
    const cold = performance.now() - t;
    console.log(
      `GET /dags?perPage=100, first request (parses ${FILES} files): ${cold.toFixed(0)} ms`,
    );
    console.log(
      `GET /dags?perPage=100 (${FILES} DAG files, ${FILES * RUNS_PER_DAG} runs): ${await measure('/dags?perPage=100', page('dag-0000'))} (target p95 < 20 ms)`,
    );
    await fetchJson('/dags?perPage=100&sort=nextRun'); // warm the run indexes of that page
    console.log(
      `GET /dags?perPage=100&sort=nextRun: ${await measure('/dags?perPage=100&sort=nextRun', page())}`,
    );
    await fetchJson('/dags?perPage=100&page=10&tag=etl&name=dag');
    console.log(
      `GET /dags?perPage=100&page=5&tag=etl&name=dag: ${await measure(
        '/dags?perPage=100&page=5&tag=etl&name=dag',
        (b) => {
          if (b.dags.length !== 100 || b.pagination.totalRecords !== FILES / 2)
            throw new Error('unexpected filter result');
        },
      )}`,
    );
    // One file edited between requests: only that one is parsed again.
    let n = 0;
    const edits = [];
    for (let i = 0; i < 50; i++) {
      writeFileSync(join(dagsDir, 'dag-0001.yaml'), typical(1) + `# edit ${n++}\n`);
      const s = performance.now();
      await fetchJson('/dags?perPage=100');
      edits.push(performance.now() - s);
    }
    console.log(
      `GET /dags?perPage=100 after editing one file: p50 ${pct(edits, 50).toFixed(1)} ms, p95 ${pct(edits, 95).toFixed(1)} ms`,
    );
    latestRun = fromRecord;
    console.log(
      `GET /dags?perPage=100, latest runs read as full records (store.latestRun): ${await measure('/dags?perPage=100', page('dag-0000'))}`,
    );
  } finally {
    client.close();
    await new Promise((r) => server.close(r));
    rmSync(home, { recursive: true, force: true });
  }
}
