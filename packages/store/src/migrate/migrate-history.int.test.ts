import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeStatus, RunStatus, type Clock } from '@trellis/core';
import { parseDagFile, type Dag } from '@trellis/spec';
import { FsRunStore } from '../runs/fs-run-store.js';
import { writeLegacyRun, type LegacyRunSpec } from '../../test/support/legacy-history.js';
import { migrateHistory, type MigrationReport } from './migrate-history.js';

const clock: Clock = {
  now: () => new Date('2026-03-04T05:06:07.000Z'),
  sleep: () => Promise.resolve(),
};
const DAGS = ['etl', 'report', 'backup', 'sync'];
const RUNS = 1000;

/** Minutes, for the tests that migrate the whole data set (10-20 s on a busy 2-core machine). */
const HEAVY = { timeout: 5 * 60_000 };

let home: string;
let legacy: string;
let store: FsRunStore;
let first: MigrationReport;
let second: MigrationReport;
let dataBefore: string[];
let dataAfter: string[];
let logsBefore: string[];
let logsAfter: string[];
const etl: Dag = parseDagFile(
  'name: etl\nsteps:\n  - name: extract\n    command: sh extract.sh --day ${DAY}\n  - name: load\n    command: sh load.sh\n',
).main.dag;

const idOf = (i: number): string =>
  `${i.toString(16).padStart(8, '0')}-5c1e-4a9b-8d2f-${(i * 7919).toString(16).padStart(12, '0')}`;

/** Run i of the generated history: every 50th never started, a few still running. */
const specOf = (i: number): LegacyRunSpec => {
  const started = new Date(Date.UTC(2024, 0, 1) + i * 3_600_000).toISOString();
  const status = i % 50 === 0 ? 0 : i % 97 === 1 ? 1 : ([4, 4, 4, 2, 3][i % 5] ?? 4);
  return {
    dag: DAGS[i % DAGS.length] ?? 'etl',
    requestId: idOf(i),
    status,
    startedAt: started,
    finishedAt: status === 1 ? '' : new Date(Date.parse(started) + 90_000).toISOString(),
    withLogs: i % 8 === 0,
  };
};
const NOT_STARTED = Array.from({ length: RUNS }, (_, i) => i).filter((i) => i % 50 === 0).length;
const CORRUPT = 'etl.20240101.00:00:00.000Z.deadbeef.dat';

/** Path, size and mtime of every file under `dir` (what a no-op migration must not change). */
const treeOf = (dir: string): string[] => {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(`${relative(dir, p)} ${statSync(p).size} ${statSync(p).mtimeMs}`);
    }
  };
  walk(dir);
  return out.sort();
};

const migrate = (legacyDir = legacy, target = store) =>
  migrateHistory({
    legacyDir,
    store: target,
    clock,
    loadDag: (name) => (name === 'etl' ? etl : undefined),
  });

/** A small history of its own (archive and dry-run cases), `n` runs. */
const smallHistory = (name: string, n: number): { legacyDir: string; target: FsRunStore } => {
  const base = join(home, name);
  const legacyDir = join(base, 'legacy');
  for (let i = 1; i <= n; i++) writeLegacyRun(legacyDir, join(base, 'legacy-logs'), specOf(i));
  const target = new FsRunStore({
    dataDir: join(base, 'data'),
    logDir: join(base, 'logs'),
    clock,
  });
  return { legacyDir, target };
};

// The 1,000-run data set is generated and migrated once, then migrated a second time; the tests
// read the two reports and the store (in file order: the last one changes the store).
beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'trellis-migrate-'));
  legacy = join(home, 'legacy', 'data');
  store = new FsRunStore({ dataDir: join(home, 'data'), logDir: join(home, 'logs'), clock });
  for (let i = 0; i < RUNS; i++) writeLegacyRun(legacy, join(home, 'legacy', 'logs'), specOf(i));
  writeFileSync(
    join(legacy, 'etl-3f2a9c', CORRUPT),
    '{"RequestId":"deadbeef-0000","Name":"etl","Sta',
  );
  first = await migrate();
  dataBefore = treeOf(join(home, 'data'));
  logsBefore = treeOf(join(home, 'logs'));
  second = await migrate();
  dataAfter = treeOf(join(home, 'data'));
  logsAfter = treeOf(join(home, 'logs'));
}, HEAVY.timeout);
afterAll(() => rmSync(home, { recursive: true, force: true }), HEAVY.timeout);

describe('migrate history (1.16.x .dat files, 1,000 runs)', () => {
  it('converts every started run, skips never-started ones, reports the corrupt file and archives nothing', async () => {
    const report = first;
    expect(report.folders.map((f) => relative(legacy, f))).toEqual(
      DAGS.map((d) => `${d}-3f2a9c`).sort(),
    );
    expect(report.converted).toBe(RUNS - NOT_STARTED);
    expect(report.skipped).toHaveLength(NOT_STARTED);
    expect(report.skipped[0]?.reason).toBe('the run never started');
    expect(report.failed).toEqual([
      {
        file: join(legacy, 'etl-3f2a9c', CORRUPT),
        reason: expect.stringMatching(/^corrupt: its last line is not JSON/) as string,
      },
    ]);
    expect(report.archivedTo).toBeUndefined();
    expect(readdirSync(legacy).sort()).toEqual(DAGS.map((d) => `${d}-3f2a9c`).sort());
    expect(await store.listRuns()).toHaveLength(RUNS - NOT_STARTED);
  });

  it('maps the fields: ids, times, status, params, steps from the DAGs folder, handlers, logs', async () => {
    // run 16: etl, finished, with logs
    const s = specOf(16);
    const r = await store.getRun({ name: 'etl', dagRunId: s.requestId });
    expect(r).toMatchObject({
      name: 'etl',
      dagRunId: s.requestId,
      root: { name: 'etl', dagRunId: s.requestId },
      status: RunStatus.Succeeded,
      createdAt: s.startedAt,
      startedAt: s.startedAt,
      finishedAt: s.finishedAt,
      queuedAt: '',
      params: [
        { name: 'DAY', value: '1' },
        { name: '1', value: 'extra' },
      ],
      log: store.runLogPath({ name: 'etl', dagRunId: s.requestId }),
    });
    expect(r.parent).toBeUndefined();
    expect(r.nodes.map((n) => [n.step.name, n.status, n.doneCount])).toEqual([
      ['extract', NodeStatus.Succeeded, 1],
      ['load', NodeStatus.Succeeded, 1],
    ]);
    // the step definition comes from the DAGs folder for a DAG that is still there
    expect(r.nodes[0]?.step.command).toBe(etl.steps[0]?.command);
    expect(r.onExit?.step.name).toBe('onExit');
    const out = store.stepLogPaths(r, 'extract').stdoutPath;
    expect(r.nodes[0]?.stdout).toBe(out);
    expect(readFileSync(out, 'utf8')).toBe('extracted 10 rows\n');
    expect(readFileSync(r.log, 'utf8')).toBe(`run ${s.requestId} started\n`);
    expect((await store.getSnapshot(r)).dag).toMatchObject({ name: 'etl' });

    // run 13: report (no DAG file: a stand-in definition), failed, no logs kept
    const f = specOf(13);
    const failed = await store.getRun({ name: 'report', dagRunId: f.requestId });
    expect(failed.status).toBe(RunStatus.Failed);
    expect(failed.nodes[1]).toMatchObject({
      status: NodeStatus.Failed,
      error: 'exit status 1',
      retryCount: 2,
    });
    expect(failed.nodes[1]?.step.command).toBe('sh');
    expect(failed.onFailure?.status).toBe(NodeStatus.Succeeded);
    expect(failed.nodes[0]?.stdout).toMatch(/legacy\/logs\/report\/extract\./); // file never existed
    expect((await store.getSnapshot(failed)).dag).toMatchObject({ name: 'report' });

    // run 98: left "running" by the old release
    const running = await store.getRun({ name: specOf(98).dag, dagRunId: specOf(98).requestId });
    expect(running.status).toBe(RunStatus.Failed);
    expect(running.error).toContain('still "running" in the 1.16 history');
  });

  it('is idempotent: a second run converts nothing and changes no file', () => {
    const again = second;
    expect(again.converted).toBe(0);
    expect(again.skipped).toHaveLength(RUNS);
    expect(again.skipped.filter((x) => x.reason.endsWith('is already in the store'))).toHaveLength(
      RUNS - NOT_STARTED,
    );
    expect(again.failed).toHaveLength(1);
    expect(dataAfter).toEqual(dataBefore);
    expect(logsAfter).toEqual(logsBefore);
  });

  it('never overwrites a run that is already in the store', HEAVY, async () => {
    const mine = await store.getRun({ name: 'etl', dagRunId: specOf(16).requestId });
    mine.error = 'edited after the migration';
    mine.revision++;
    await store.saveRun(mine);
    await migrate();
    expect((await store.getRun(mine)).error).toBe('edited after the migration');
  });

  it('archives the legacy folders once every file converted', async () => {
    const { legacyDir, target } = smallHistory('archive', 40);
    const report = await migrate(legacyDir, target);
    expect(report.failed).toEqual([]);
    expect(report.converted).toBe(40);
    expect(report.archivedTo).toBe(join(legacyDir, 'history_migrated_20260304_050607'));
    expect(readdirSync(legacyDir)).toEqual(['history_migrated_20260304_050607']);
    expect(readdirSync(report.archivedTo!).sort()).toEqual(DAGS.map((d) => `${d}-3f2a9c`).sort());
    const again = await migrate(legacyDir, target);
    expect(again).toEqual({ folders: [], converted: 0, skipped: [], failed: [] });
  });

  it('reports what a dry run would do and stores nothing', async () => {
    const { legacyDir, target } = smallHistory('dry', 20);
    const report = await migrateHistory({
      legacyDir,
      store: target,
      clock,
      loadDag: () => undefined,
      dryRun: true,
    });
    expect(report.converted).toBe(20);
    expect(report.archivedTo).toBeUndefined();
    expect(await target.listRuns()).toEqual([]);
    expect(readdirSync(legacyDir)).toHaveLength(DAGS.length);
  });
});
