// The PostgreSQL store at the store level (issue 20, "Performance"), beside the file store for
// the same calls: the listing behind GET /dag-runs?name=X over 10,000 runs of one DAG (RunReads
// .list -> listRuns({ name })), a step log tail of a 200,000-line log (the log endpoint's
// readLog(path, { tail })), the listing's memory per run, `trellis start-all` on each store
// (one-step run POST to final, target PostgreSQL < 1.5x files; the listing over HTTP:
// bench/pg-start-all.js), and `trellis migrate store` of a 5,000-run home. A private
// PostgreSQL (packages/testkit startPostgres) on this machine; needs `tsc -b`.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { systemClock } from '../packages/core/dist/index.js';
import { FsRunStore, runLogPathIn, stepLogPathsBeside } from '../packages/store/dist/index.js';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  copyFilesToPg,
  exportPgToFiles,
  openPgStore,
  PgDb,
  PgRunStore,
} from '../packages/store-pg/dist/index.js';
import { startPostgres } from '../packages/testkit/dist/index.js';
import { startAllSideBySide } from './pg-start-all.js';
import { pct } from './util.js';

const RUNS = 10_000;
const LOG_LINES = 200_000;
const HOME_RUNS = 5_000;

const load = () => `load ${loadavg()[0].toFixed(2)}`;
const line = (what, figure, target) =>
  console.log(`${what}: ${figure} (target ${target}; ${load()})`);

/** p50 and p95 (ms) of `n` calls after 3 warm-ups. */
const timed = async (fn, n = 60) => {
  for (let i = 0; i < 3; i++) await fn();
  const xs = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    xs.push(performance.now() - t0);
  }
  return `p50 ${pct(xs, 50).toFixed(2)} ms, p95 ${pct(xs, 95).toFixed(2)} ms`;
};

const record = (logDir, name, i, status = 4) => {
  const id = `run-${String(i).padStart(5, '0')}`;
  const createdAt = new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString();
  const log = runLogPathIn(logDir, { name, dagRunId: id });
  const { stdoutPath, stderrPath } = stepLogPathsBeside(log, 'work');
  return {
    name,
    dagRunId: id,
    root: { name, dagRunId: id },
    status,
    createdAt,
    queuedAt: status === 5 ? createdAt : '',
    startedAt: createdAt,
    finishedAt: createdAt,
    log,
    params: [{ name: 'DAY', value: 'mon' }],
    nodes: [
      {
        step: { name: 'work', command: 'echo work' },
        stdout: stdoutPath,
        stderr: stderrPath,
        startedAt: createdAt,
        finishedAt: createdAt,
        status: 4,
        retryCount: 0,
        doneCount: 1,
        retriedAt: '',
        children: [],
        childrenRepeated: [],
        error: '',
        outputs: {},
      },
    ],
    preconditions: [],
    error: '',
    queue: name,
    revision: 3,
  };
};
const SNAPSHOT = { dag: { name: 'etl', steps: [{ name: 'work' }] }, localDags: [] };

const bigLog = function* () {
  for (let k = 1; k <= LOG_LINES; k += 10_000) {
    let s = '';
    for (let j = k; j < k + 10_000; j++)
      s += `2026-01-02T03:04:05.${String(j % 1000).padStart(3, '0')}Z step-${j % 50} processed item ${j} ok\n`;
    yield s;
  }
};

/** `make(0..n-1)`, 8 at a time (seeding; the pool has 5 connections). */
const inBatches = async (n, make) => {
  for (let i = 0; i < n; i += 8)
    await Promise.all(Array.from({ length: Math.min(8, n - i) }, (_, k) => make(i + k)));
};

/**
 * The listing's memory (its summaries, per run) and its first read, in a store that has not
 * listed yet, as a process just started.
 */
const listingMemory = async (url, dir) => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc');
  const db = new PgDb({ url, poolSize: 2 });
  try {
    const store = new PgRunStore({ db, logDir: join(dir, 'logs'), clock: systemClock });
    gc();
    const before = process.memoryUsage().heapUsed;
    const t0 = performance.now();
    await store.listRuns({ name: 'etl', limit: 1 });
    const took = performance.now() - t0;
    gc();
    const kb = (process.memoryUsage().heapUsed - before) / 1024;
    line(
      `PostgreSQL listing, first read of ${RUNS + 500} summaries into memory`,
      `${took.toFixed(0)} ms, heap +${(kb / 1024).toFixed(1)} MB, ${((kb * 1024) / (RUNS + 500)).toFixed(0)} bytes per run`,
      'none set; once per process',
    );
    // each listing asks the database what changed: one round trip is its floor
    line(
      'PostgreSQL round trip, SELECT 1 (the floor of a listing)',
      await timed(() => db.query('SELECT 1')),
      'none set',
    );
  } finally {
    await db.end();
  }
};

/** 10,000 runs of one DAG (and 500 of another) in both stores, then the listing and the tail. */
const listingAndTail = async (pgStore, url, dir) => {
  const files = new FsRunStore({
    dataDir: join(dir, 'data'),
    logDir: join(dir, 'logs'),
    clock: systemClock,
  });
  let t0 = performance.now();
  await inBatches(RUNS, (i) => pgStore.createRun(record(join(dir, 'logs'), 'etl', i), SNAPSHOT));
  await inBatches(500, (i) => pgStore.createRun(record(join(dir, 'logs'), 'other', i), SNAPSHOT));
  console.log(
    `PostgreSQL: ${RUNS + 500} createRun: ${((performance.now() - t0) / 1000).toFixed(1)} s (${load()})`,
  );
  t0 = performance.now();
  await inBatches(RUNS, (i) => files.createRun(record(join(dir, 'logs'), 'etl', i), SNAPSHOT));
  console.log(
    `files: ${RUNS} createRun: ${((performance.now() - t0) / 1000).toFixed(1)} s (${load()})`,
  );
  await listingMemory(url, dir);
  for (const [label, f] of [
    ['GET /dag-runs?name=etl (all 10,000)', { name: 'etl' }],
    ['GET /dag-runs?name=etl, first 100', { name: 'etl', limit: 100 }],
  ]) {
    line(`PostgreSQL listRuns, ${label}`, await timed(() => pgStore.listRuns(f)), 'p95 < 20 ms');
    line(`files listRuns, ${label}`, await timed(() => files.listRuns(f)), 'p95 < 20 ms');
  }
  const path = join(dir, 'logs', 'etl', 'big', 'work.out');
  mkdirSync(join(dir, 'logs', 'etl', 'big'), { recursive: true });
  t0 = performance.now();
  for (const chunk of bigLog()) await pgStore.logs.append(path, chunk);
  console.log(
    `PostgreSQL: ${LOG_LINES} lines appended in 10,000-line appends: ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  writeFileSync(path, [...bigLog()].join(''));
  for (const tail of [100, 1000]) {
    line(
      `PostgreSQL step log tail=${tail} of ${LOG_LINES} lines`,
      await timed(() => pgStore.readLog(path, { tail })),
      '< 50 ms',
    );
    line(
      `files step log tail=${tail} of ${LOG_LINES} lines`,
      await timed(() => files.readLog(path, { tail })),
      '< 50 ms',
    );
  }
};

/** A 5,000-run home (three logs each, every 50th queued) copied in, again, and exported. */
const migration = async (pg, dir) => {
  const home = join(dir, 'home');
  const files = new FsRunStore({
    dataDir: join(home, 'data'),
    logDir: join(home, 'logs'),
    clock: systemClock,
  });
  for (let i = 0; i < HOME_RUNS; i++) {
    const r = record(join(home, 'logs'), `dag-${i % 5}`, i, i % 50 === 7 ? 5 : 4);
    await files.createRun(r, SNAPSHOT);
    mkdirSync(join(r.log, '..'), { recursive: true });
    writeFileSync(
      r.log,
      `2026-01-02T03:04:05Z run ${r.dagRunId} started\n2026-01-02T03:04:07Z done\n`,
    );
    writeFileSync(r.nodes[0].stdout, Array.from({ length: 20 }, (_, k) => `line ${k}\n`).join(''));
    writeFileSync(r.nodes[0].stderr, '');
  }
  const { db, close } = await openPgStore({
    url: await pg.createDatabase('moved'),
    poolSize: 5,
    logDir: join(home, 'logs'),
    clock: systemClock,
  });
  try {
    const opts = { files, dataDir: join(home, 'data'), db, clock: systemClock };
    let t0 = performance.now();
    const first = await copyFilesToPg(opts);
    let s = (performance.now() - t0) / 1000;
    const rows = first.runs.added + first.logs.added + first.logLines;
    line(
      `migrate store --to postgres, ${HOME_RUNS} runs, ${first.logs.added} logs, ${first.logLines} lines`,
      `${s.toFixed(1)} s, ${(HOME_RUNS / s).toFixed(0)} runs/s, ${(rows / s).toFixed(0)} rows/s`,
      'none set; a home of 5,000 runs in minutes at most',
    );
    t0 = performance.now();
    await copyFilesToPg(opts);
    s = (performance.now() - t0) / 1000;
    line('  second pass (everything already there)', `${s.toFixed(1)} s`, 'none set');
    const out = join(dir, 'export');
    t0 = performance.now();
    await exportPgToFiles({
      db,
      files: new FsRunStore({
        dataDir: join(out, 'data'),
        logDir: join(out, 'logs'),
        clock: systemClock,
      }),
      logDir: join(out, 'logs'),
    });
    s = (performance.now() - t0) / 1000;
    line(
      `migrate store --to files (export), ${HOME_RUNS} runs`,
      `${s.toFixed(1)} s, ${(HOME_RUNS / s).toFixed(0)} runs/s`,
      'none set',
    );
  } finally {
    await close();
  }
};

export default async function run() {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-bench-pg-'));
  const pg = await startPostgres();
  try {
    const url = await pg.createDatabase('bench');
    const { close, store } = await openPgStore({
      url,
      poolSize: 5,
      logDir: join(dir, 'logs'),
      clock: systemClock,
    });
    try {
      await listingAndTail(store, url, dir);
    } finally {
      await close();
    }
    await startAllSideBySide({ filesHome: dir, databaseUrl: url, dagName: 'etl', runs: RUNS });
    await migration(pg, dir);
  } finally {
    await pg.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
