// What `trellis migrate history` costs on a large 1.16.x history (issue #9): runs converted per
// second on the first pass, and the cost of the idempotent second pass (everything skipped).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { systemClock } from '../packages/core/dist/index.js';
import { FsRunStore, migrateHistory } from '../packages/store/dist/index.js';

const RUNS = 5_000;
const DAGS = 10;

/** One legacy `.dat` file: a first status line and the final one, capitalised keys. */
const writeRun = (legacy, i) => {
  const dag = `dag${i % DAGS}`;
  const dir = join(legacy, `${dag}-3f2a9c`);
  const id = `${i.toString(16).padStart(8, '0')}-0000-4000-8000-000000000000`;
  const started = new Date(Date.UTC(2024, 0, 1) + i * 60_000);
  const iso = started.toISOString();
  const node = (name) => ({
    Step: { Name: name, CmdWithArgs: `sh ${name}.sh` },
    Log: '',
    StartedAt: iso,
    FinishedAt: iso,
    Status: 4,
    RetryCount: 0,
    DoneCount: 1,
    Error: '',
  });
  const final = {
    RequestId: id,
    Name: dag,
    Status: 4,
    Nodes: [node('extract'), node('transform'), node('load')],
    OnExit: node('onExit'),
    StartedAt: iso,
    FinishedAt: iso,
    Log: '',
    ParamsList: ['DAY=1'],
  };
  const stamp = iso
    .replace(/-/g, '')
    .replace('T', '.')
    .replace(/(\d\d):(\d\d):(\d\d)/, '$1:$2:$3');
  writeFileSync(
    join(dir, `${dag}.${stamp}.${id.slice(0, 8)}.dat`),
    `${JSON.stringify({ ...final, Status: 1, Nodes: [] })}\n${JSON.stringify(final)}\n`,
  );
};

export default async () => {
  const home = mkdtempSync(join(tmpdir(), 'trellis-bench-migrate-'));
  try {
    const legacy = join(home, 'legacy');
    for (let d = 0; d < DAGS; d++) mkdirSync(join(legacy, `dag${d}-3f2a9c`), { recursive: true });
    for (let i = 0; i < RUNS; i++) writeRun(legacy, i);
    const store = new FsRunStore({
      dataDir: join(home, 'data'),
      logDir: join(home, 'logs'),
      clock: systemClock,
    });
    const opts = { legacyDir: legacy, store, clock: systemClock, loadDag: () => undefined };
    let t0 = performance.now();
    const first = await migrateHistory({ ...opts, dryRun: true });
    const dry = performance.now() - t0;
    t0 = performance.now();
    const real = await migrateHistory({ ...opts, legacyDir: legacy });
    const firstMs = performance.now() - t0;
    // a fresh store object: the second pass reads records from disk, not from a warm cache
    const again = new FsRunStore({
      dataDir: join(home, 'data'),
      logDir: join(home, 'logs'),
      clock: systemClock,
    });
    mkdirSync(legacy, { recursive: true });
    for (let d = 0; d < DAGS; d++) mkdirSync(join(legacy, `dag${d}-3f2a9c`), { recursive: true });
    for (let i = 0; i < RUNS; i++) writeRun(legacy, i);
    t0 = performance.now();
    const second = await migrateHistory({ ...opts, store: again });
    const secondMs = performance.now() - t0;
    console.log(`legacy history: ${RUNS} runs in ${DAGS} DAG folders`);
    console.log(`dry run:      ${dry.toFixed(0)} ms (${first.converted} would convert)`);
    console.log(
      `first pass:   ${firstMs.toFixed(0)} ms, ${real.converted} converted, ${((real.converted / firstMs) * 1000).toFixed(0)} runs/s`,
    );
    console.log(
      `second pass:  ${secondMs.toFixed(0)} ms, ${second.converted} converted, ${second.skipped.length} skipped (idempotent)`,
    );
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
};
