import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunStatus, type Clock } from '@trellis/core';
import type { RunOwner } from '@trellis/spec';
import { FsRunStore } from '../runs/fs-run-store.js';
import { makeChildRecord, makeRecord } from '@trellis/testkit';
import { currentOwner, isOwnerAlive, processStartTime } from './process-owner.js';

const clock: Clock = {
  now: () => new Date('2026-01-02T03:04:05Z'),
  sleep: () => Promise.resolve(),
};

/** The owner record of a process that ran `sleep` and was killed. */
const deadOwner = async (): Promise<RunOwner> => {
  const child = spawn('sleep', ['30'], { stdio: 'ignore' });
  const pid = child.pid!;
  const owner: RunOwner = { ...currentOwner(), pid, processStart: processStartTime(pid)! };
  expect(isOwnerAlive(owner)).toBe(true);
  child.kill('SIGKILL');
  await once(child, 'exit');
  return owner;
};

describe('owner liveness', () => {
  it('finds this process alive, with a start time before now', () => {
    const started = processStartTime(process.pid);
    expect(started).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Date.parse(started!)).toBeLessThanOrEqual(Date.now());
    expect(Date.parse(started!)).toBeGreaterThan(Date.now() - process.uptime() * 1000 - 5000);
    expect(isOwnerAlive(currentOwner())).toBe(true);
    expect(currentOwner('w1').workerId).toBe('w1');
  });

  it('finds a killed process dead', async () => {
    const owner = await deadOwner();
    expect(processStartTime(owner.pid)).toBeUndefined();
    expect(isOwnerAlive(owner)).toBe(false);
  });

  it('finds a live pid with another start time dead (the pid was reused)', () => {
    const me = currentOwner();
    const hourBefore = new Date(Date.parse(me.processStart) - 3_600_000).toISOString();
    expect(isOwnerAlive({ ...me, processStart: hourBefore })).toBe(false);
  });

  it('never finds an owner on another host alive', () => {
    expect(isOwnerAlive({ ...currentOwner(), host: 'elsewhere.example' })).toBe(false);
  });

  it('has no start time for a pid that cannot exist', () => {
    expect(processStartTime(0)).toBeUndefined();
    expect(processStartTime(-5)).toBeUndefined();
  });
});

describe('findOrphanedRuns', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'trellis-orphans-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('returns running runs and children whose local owner died or is missing, and nothing else', async () => {
    const store = new FsRunStore({ dataDir: join(dir, 'data'), logDir: join(dir, 'logs'), clock });
    const dead = await deadOwner();
    const alive = currentOwner();
    const running = RunStatus.Running;
    const runs = [
      makeRecord({ dagRunId: 'dead', status: running, owner: dead }),
      makeRecord({ dagRunId: 'alive', status: running, owner: alive }),
      makeRecord({
        dagRunId: 'remote',
        status: running,
        owner: { ...dead, workerId: 'w1', host: 'w1.example' },
      }),
      makeRecord({ dagRunId: 'ownerless', status: running }),
      makeRecord({ dagRunId: 'done', status: RunStatus.Failed, owner: dead }),
      makeRecord({ name: 'other', dagRunId: 'queued', status: RunStatus.Queued }),
    ];
    for (const r of runs) await store.createRun(r, { dag: {}, localDags: [] });
    const root = runs[1]!;
    await store.createRun(
      makeChildRecord(root, { dagRunId: 'child-dead', status: running, owner: dead }),
      { dag: {}, localDags: [] },
    );

    const found = (await store.findOrphanedRuns()).map((r) => r.dagRunId).sort();
    expect(found).toEqual(['child-dead', 'dead', 'ownerless']);
  });

  it('finds a run whose last index line was lost in the crash, from its record', async () => {
    const store = new FsRunStore({ dataDir: join(dir, 'data'), logDir: join(dir, 'logs'), clock });
    const dead = await deadOwner();
    const rec = makeRecord({ status: RunStatus.Queued, owner: dead });
    await store.createRun(rec, { dag: {}, localDags: [] });
    // status.json says running; the index append that should have followed never happened.
    writeFileSync(
      join(dir, 'data/runs/etl/run-0001/status.json'),
      JSON.stringify({ ...rec, status: RunStatus.Running, revision: 1 }),
    );
    const fresh = new FsRunStore({ dataDir: join(dir, 'data'), logDir: join(dir, 'logs'), clock });
    expect((await fresh.findOrphanedRuns()).map((r) => r.dagRunId)).toEqual(['run-0001']);
    // ... and the index was corrected on the way.
    expect((await fresh.listRuns({ status: RunStatus.Running })).map((r) => r.dagRunId)).toEqual([
      'run-0001',
    ]);
  });
});
