// What the run metrics cost a server at start (issue 18): the counters and histograms by DAG are
// rebuilt from the run history (`listRuns({includeChildren: true})` over the run index, then one
// pass), and the first scrape waits for it. 50,000 finished runs of 100 DAGs; a fresh FsRunStore
// over index files already written, as a restarted server finds them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createMetrics } from '../packages/api/dist/index.js';
import { systemClock } from '../packages/core/dist/index.js';
import { FsRunStore } from '../packages/store/dist/index.js';
import { writeFinishedRun } from '../packages/testkit/dist/index.js';
import { flushToDisk } from './util.js';

const DAGS = 100;
const RUNS_PER_DAG = 500;

const storeOf = (home) =>
  new FsRunStore({ dataDir: join(home, 'data'), logDir: join(home, 'logs'), clock: systemClock });

const metricsOver = (store) =>
  createMetrics({
    version: 'bench',
    buildDate: '',
    clock: systemClock,
    startedAt: new Date(),
    sources: {
      runningRuns: () => 0,
      queuedRuns: () => ({}),
      dagCount: () => DAGS,
      schedulerRunning: () => true,
      history: () => store.listRuns({ includeChildren: true }),
    },
  });

export default async () => {
  const home = mkdtempSync(join(tmpdir(), 'trellis-bench-metrics-'));
  try {
    const t0 = Date.parse('2026-01-01T00:00:00Z');
    for (let d = 0; d < DAGS; d++)
      for (let r = 0; r < RUNS_PER_DAG; r++) {
        const at = new Date(t0 + (d * RUNS_PER_DAG + r) * 1000).toISOString();
        writeFinishedRun(home, `dag-${d}`, `run-${d}-${r}`, at);
      }
    await storeOf(home).listRuns({ includeChildren: true }); // writes the index files
    flushToDisk();

    const heap0 = process.memoryUsage().heapUsed;
    const started = performance.now();
    const store = storeOf(home);
    const history = await store.listRuns({ includeChildren: true });
    const read = performance.now() - started;
    const metrics = metricsOver({ listRuns: () => Promise.resolve(history) });
    const first = await metrics.render();
    const total = performance.now() - started;
    const heap = (process.memoryUsage().heapUsed - heap0) / 1e6;
    const again = performance.now();
    await metrics.render();
    const scrape = performance.now() - again;
    console.log(`${history.length} runs of ${DAGS} DAGs in history`);
    console.log(`history read (fresh store, index files present): ${read.toFixed(0)} ms`);
    console.log(
      `read + rebuild + first scrape: ${total.toFixed(0)} ms (heap +${heap.toFixed(0)} MB)`,
    );
    console.log(
      `a later scrape: ${scrape.toFixed(1)} ms, ${(first.body.length / 1024).toFixed(0)} KiB of exposition`,
    );
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
};
