import { mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { runRoutes, toApiRunSummary, toGridData } from '@trellis/api';
import { RunStatus, systemClock } from '@trellis/core';
import { FsRunStore } from '@trellis/store';
import { makeRecord } from '@trellis/testkit';
import { apiHarness, type ApiHarness } from '../support/api-harness.js';
import { createTempHome } from '../support/local-run-service.js';

/**
 * GET /dags/{fileName}/dag-runs keeps its answer while the DAG's change stamp is the same
 * (docs/decisions.md, "A per-DAG change stamp"): a repeat reads no record, a write makes it read
 * again, and a stamp that cannot be taken answers from the records (never an error).
 */
const ORDER = ['first', 'second'];
const SNAPSHOT = { dag: { name: 'a', steps: [] }, localDags: [] };
let h: ApiHarness | undefined;
afterEach(() => h?.cleanup());

/** The harness with its read endpoints on another real store of the same data folder, whose record reads are counted. */
const counted = () => {
  const home = createTempHome('trellis-api-');
  const reads = new FsRunStore({
    dataDir: join(home.home, 'data'),
    logDir: join(home.home, 'logs'),
    clock: systemClock,
  });
  const counter = { getRun: 0 };
  const getRun = reads.getRun.bind(reads);
  reads.getRun = (...args) => {
    counter.getRun++;
    return getRun(...args);
  };
  h = apiHarness([runRoutes], { home, reads });
  h.dag('a', 'steps:\n  - {name: first, command: "true"}\n  - {name: second, command: "true"}\n');
  return { h, counter };
};

const expected = async (store: FsRunStore): Promise<string> => {
  const runs = await Promise.all(
    (await store.listRuns({ name: 'a', limit: 30 })).map((s) => store.getRun(s)),
  );
  return JSON.stringify({
    dagRuns: runs.map((r) => toApiRunSummary(r)),
    gridData: toGridData(runs, ORDER),
  });
};

const get = async (app: ApiHarness['app']): Promise<string> =>
  (await request(app).get('/api/v2/dags/a/dag-runs').expect(200)).text;

describe('DAG run history kept between requests', () => {
  it('reads no record for a repeat, and reads them again after a write', async () => {
    const { h, counter } = counted();
    const run = makeRecord({ name: 'a', dagRunId: 'a1', status: RunStatus.Running });
    await h.store.createRun(run, SNAPSHOT);
    await h.store.createRun(makeRecord({ name: 'a', dagRunId: 'a2' }), SNAPSHOT);
    const first = await get(h.app);
    expect(counter.getRun).toBe(2);
    expect(await get(h.app)).toBe(first);
    expect(counter.getRun).toBe(2); // kept: no record read
    await h.store.saveRun({ ...run, revision: 1, status: RunStatus.Succeeded });
    const second = await get(h.app);
    expect(counter.getRun).toBe(4);
    expect(second).not.toBe(first);
    expect(second).toBe(await expected(h.store));
  });

  it('answers from the records when the change stamp cannot be taken', async () => {
    const { h, counter } = counted();
    const run = makeRecord({ name: 'a', dagRunId: 'a1', status: RunStatus.Running });
    await h.store.createRun(run, SNAPSHOT);
    const changes = join(h.home, 'data/runs/a/.changes');
    rmSync(changes);
    symlinkSync('.changes', changes); // a loop: every stat fails (ELOOP), also for root
    expect(await get(h.app)).toBe(await expected(h.store));
    expect(await get(h.app)).toBe(await expected(h.store));
    expect(counter.getRun).toBe(2); // nothing kept
    rmSync(changes);
    mkdirSync(changes); // not a file: no append ever changes it
    const before = await get(h.app);
    await h.store.saveRun({ ...run, revision: 1, status: RunStatus.Succeeded });
    const after = await get(h.app);
    expect(after).not.toBe(before);
    expect(after).toBe(await expected(h.store));
  });
});
