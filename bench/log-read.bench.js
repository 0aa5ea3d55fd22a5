// What log reads and run listings cost on a large history: the API's log endpoints and
// GET /dag-runs (issue 3: "fast and memory-flat on a 1,000,000-line file"; docs/architecture.md
// section 4: list latency flat as history grows). Run `node --expose-gc` for steadier RSS figures.
import {
  mkdirSync,
  mkdtempSync,
  openSync,
  closeSync,
  writeSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { systemClock } from '../packages/core/dist/index.js';
import { FsRunStore, readLogChunk } from '../packages/store/dist/index.js';

const LINES = 1_000_000;
const RUNS = 10_000;
const mb = (bytes) => (bytes / 1024 / 1024).toFixed(1);

/** Median time (ms) of `n` runs after one warm-up, and the largest RSS growth seen (bytes). */
const measure = async (fn, n = 7) => {
  await fn();
  const times = [];
  let rssDelta = 0;
  for (let i = 0; i < n; i++) {
    globalThis.gc?.();
    const rss0 = process.memoryUsage().rss;
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
    rssDelta = Math.max(rssDelta, process.memoryUsage().rss - rss0);
  }
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor(n / 2)], rssDelta };
};

const writeBigLog = (path) => {
  const fd = openSync(path, 'w');
  for (let k = 1; k <= LINES; k += 10_000) {
    let s = '';
    for (let j = k; j < k + 10_000; j++)
      s += `2026-01-02T03:04:05.${String(j % 1000).padStart(3, '0')}Z step-${j % 50} processed item ${j} ok\n`;
    writeSync(fd, s);
  }
  closeSync(fd);
};

const record = (i) => {
  const createdAt = new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString();
  return {
    name: 'etl',
    dagRunId: `run-${String(i).padStart(5, '0')}`,
    root: { name: 'etl', dagRunId: `run-${String(i).padStart(5, '0')}` },
    status: i % 10 === 0 ? 2 : 4,
    createdAt,
    queuedAt: '',
    startedAt: createdAt,
    finishedAt: createdAt,
    log: `/logs/etl/run-${i}/run.log`,
    params: [{ name: 'DAY', value: 'mon' }],
    nodes: [],
    preconditions: [],
    error: '',
    queue: 'etl',
    revision: 3,
  };
};

export default async function run() {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-bench-store-'));
  try {
    const log = join(dir, 'big.log');
    writeBigLog(log);
    const size = statSync(log).size;
    console.log(`log file: ${LINES.toLocaleString('en')} lines, ${mb(size)} MB`);
    for (const [label, q] of [
      ['tail=1000', { tail: 1000 }],
      ['head=1000', { head: 1000 }],
      ['offset=500000 limit=1000 (middle)', { offset: 500_000, limit: 1000 }],
      ['tail=10000', { tail: 10_000 }],
    ]) {
      const stats = { bytesRead: 0, reads: 0 };
      await readLogChunk(log, q, { stats });
      const { ms, rssDelta } = await measure(() => readLogChunk(log, q));
      console.log(
        `  ${label}: ${ms.toFixed(2)} ms, RSS +${mb(Math.max(0, rssDelta))} MB, ${mb(stats.bytesRead)} MB read`,
      );
    }

    // 10,000 runs of one DAG, written in the store's layout; the first listing builds the index.
    const dataDir = join(dir, 'data');
    for (let i = 0; i < RUNS; i++) {
      const rec = record(i);
      const runDir = join(dataDir, 'runs', 'etl', rec.dagRunId);
      mkdirSync(runDir, { recursive: true });
      writeFileSync(join(runDir, 'status.json'), JSON.stringify(rec));
    }
    const open = () => new FsRunStore({ dataDir, logDir: join(dir, 'logs'), clock: systemClock });
    let t0 = performance.now();
    await open().listRuns({ limit: 1 });
    console.log(
      `index rebuild from ${RUNS.toLocaleString('en')} status files: ${(performance.now() - t0).toFixed(0)} ms`,
    );
    t0 = performance.now();
    await open().listRuns({ limit: 1 });
    console.log(
      `index load by a new store instance (as another process would): ${(performance.now() - t0).toFixed(0)} ms`,
    );
    const store = open();
    for (const [label, f] of [
      ['all 10,000', {}],
      ['limit 100', { limit: 100 }],
      ['status=failed (1,000)', { status: 2 }],
      ['id contains "0420"', { dagRunIdContains: '0420' }],
    ]) {
      const { ms } = await measure(() => store.listRuns(f), 21);
      console.log(`  listRuns ${label}: ${ms.toFixed(2)} ms`);
    }
    const rec = record(RUNS);
    await store.createRun(rec, { dag: {}, localDags: [] });
    let revision = rec.revision;
    const { ms: saveMs } = await measure(() => store.saveRun({ ...rec, revision: ++revision }), 51);
    const { ms: changeMs } = await measure(
      () => store.saveRun({ ...rec, revision: ++revision, error: `e${revision}` }),
      51,
    );
    console.log(
      `saveRun: ${saveMs.toFixed(2)} ms (same summary), ${changeMs.toFixed(2)} ms (summary changed: index append)`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
