import { describe, expect, it } from 'vitest';
import { alreadyExists } from '@trellis/core';
import { parseDagFile } from '@trellis/spec';
import { scheduleActions, type ScheduledRunsPort } from './schedule-actions.js';
import { scheduledRunId } from './scheduled-run-id.js';

const dag = parseDagFile('schedule: "* * * * *"\nsteps:\n  - "true"\n', { name: 'etl' }).main.dag;
const at = new Date('2026-03-01T10:01:00Z');

/** Run ports over a set of run ids that exist. */
const runsOver = (existing: Set<string>): ScheduledRunsPort => ({
  startLoaded: (_dag, _local, req) => {
    if (existing.has(req.dagRunId)) return Promise.reject(alreadyExists('run', req.dagRunId));
    existing.add(req.dagRunId);
    return Promise.resolve({ record: { dagRunId: req.dagRunId }, queued: false });
  },
  stopAll: () => Promise.resolve([]),
  restart: () => Promise.resolve(undefined),
  listRuns: () => Promise.resolve([]),
});

describe('scheduledRunId', () => {
  it('is one UUID (version 5 layout) per DAG and fire time, the same on every call', () => {
    const id = scheduledRunId('etl', at);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(scheduledRunId('etl', new Date(at.getTime()))).toBe(id);
    expect(scheduledRunId('etl', new Date(at.getTime() + 60_000))).not.toBe(id);
    expect(scheduledRunId('etl2', at)).not.toBe(id);
  });
});

describe('a start fire', () => {
  it('creates the run of the fire once: a second start of the same fire adds none and says so', async () => {
    const existing = new Set<string>();
    const lines: string[] = [];
    const actions = scheduleActions(runsOver(existing), (l) => lines.push(l));
    const d = { fileName: 'etl', dag, suspended: false };
    await actions.start(d, at);
    await actions.start(d, at); // a new leader making sure of a fire its predecessor claimed
    expect([...existing]).toEqual([scheduledRunId('etl', at)]);
    expect(lines[1]).toBe(
      `scheduler: run ${scheduledRunId('etl', at)} of DAG "etl" exists already; this fire adds none`,
    );
  });

  it('still fails on any other error', async () => {
    const runs = runsOver(new Set());
    const failing: ScheduledRunsPort = {
      ...runs,
      startLoaded: () => Promise.reject(new Error('the database is away')),
    };
    const actions = scheduleActions(failing, () => undefined);
    await expect(actions.start({ fileName: 'etl', dag, suspended: false }, at)).rejects.toThrow(
      'the database is away',
    );
  });
});
