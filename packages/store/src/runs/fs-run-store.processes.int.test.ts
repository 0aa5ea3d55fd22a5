import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '@trellis/core';
import { STORE_SRC, TESTKIT_SRC, exitedOk, spawnTs } from '../../test/support/spawn-ts.js';
import { makeRecord } from '@trellis/testkit';
import { FsRunStore } from './fs-run-store.js';

const T0 = '2026-01-02T03:04:05.000Z';
const STEPS = 120;

/**
 * A process that, per step, creates a run of its own (one new index line that must never be
 * lost) and saves 4 revisions of its "hot" run (lines that soon trigger compaction).
 */
const writerScript = (dataDir: string, logDir: string, who: string): string => `
import { FsRunStore } from ${JSON.stringify(join(STORE_SRC, 'runs/fs-run-store.ts'))};
import { makeRecord, isoPlus } from ${JSON.stringify(join(TESTKIT_SRC, 'run-record.ts'))};
const clock = { now: () => new Date(), sleep: () => Promise.resolve() };
const warnings = [];
const store = new FsRunStore({ dataDir: ${JSON.stringify(dataDir)}, logDir: ${JSON.stringify(logDir)}, clock, warn: (m) => warnings.push(m) });
const hot = makeRecord({ dagRunId: 'hot-${who}', createdAt: ${JSON.stringify(T0)} });
await store.createRun(hot, { dag: {}, localDags: [] });
let revision = 0;
for (let i = 1; i <= ${STEPS}; i++) {
  await store.createRun(makeRecord({ dagRunId: '${who}-' + i, createdAt: isoPlus(${JSON.stringify(T0)}, i) }), { dag: {}, localDags: [] });
  for (let k = 0; k < 4; k++) { revision++; await store.saveRun({ ...hot, revision, error: 'attempt ' + revision }); }
}
process.stdout.write(JSON.stringify(warnings));
`;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-procs-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('run index shared by processes', () => {
  it('loses no change when two processes append to and compact one index at once', async () => {
    const dataDir = join(dir, 'data');
    const store = new FsRunStore({ dataDir, logDir: join(dir, 'logs'), clock: systemClock });
    await store.createRun(makeRecord({ dagRunId: 'first' }), { dag: {}, localDags: [] });
    expect(await store.listRuns()).toHaveLength(1); // this instance has the index loaded

    const outputs = await Promise.all([
      exitedOk(spawnTs(dir, 'a', writerScript(dataDir, join(dir, 'logs'), 'a'))),
      exitedOk(spawnTs(dir, 'b', writerScript(dataDir, join(dir, 'logs'), 'b'))),
    ]);
    expect(outputs.map((o) => JSON.parse(o) as unknown)).toEqual([[], []]);

    const fresh = new FsRunStore({ dataDir, logDir: join(dir, 'logs'), clock: systemClock });
    for (const s of [store, fresh]) {
      const runs = await s.listRuns();
      expect(runs).toHaveLength(1 + 2 * (STEPS + 1));
      for (const who of ['a', 'b'])
        expect(runs.find((r) => r.dagRunId === `hot-${who}`)?.error).toBe(`attempt ${4 * STEPS}`);
    }
    // Over 1,000 lines were appended: compactions ran while both processes were writing.
    const lines = readFileSync(join(dataDir, 'runs/etl/index.jsonl'), 'utf8').split('\n');
    expect(lines.length).toBeLessThan(1000);
  }, 60_000);
});
