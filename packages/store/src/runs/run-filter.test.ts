import { describe, expect, it } from 'vitest';
import { newestFirst, selectRuns, toIndexedRun, type IndexedRun } from './run-filter.js';
import type { RunSummary } from './run-summary.js';

const run = (name: string, id: string, createdAt: string, status = 4): IndexedRun =>
  toIndexedRun({
    name,
    dagRunId: id,
    root: { name, dagRunId: id },
    status,
    createdAt,
    queuedAt: '',
    startedAt: createdAt,
    finishedAt: createdAt,
    log: '',
    params: [],
    error: '',
    queue: name,
    revision: 1,
  } as RunSummary);

/** One DAG's index: newest first, as the index keeps it. */
const list = (...runs: IndexedRun[]): IndexedRun[] => runs.sort(newestFirst);

const a = list(
  run('a', 'a3', '2026-01-03T00:00:00Z'),
  run('a', 'a2', '2026-01-02T00:00:00Z', 2),
  run('a', 'a1', '2026-01-01T00:00:00Z'),
  run('a', 'bad', 'not a time'),
);
const b = list(run('b', 'b2', '2026-01-02T12:00:00Z'), run('b', 'b1', '2025-12-31T00:00:00Z'));
const ids = (rs: RunSummary[]) => rs.map((r) => r.dagRunId);

describe('selectRuns', () => {
  it('merges several DAGs newest first, filtering before it sorts', () => {
    expect(ids(selectRuns([a, b], {}))).toEqual(['a3', 'b2', 'a2', 'a1', 'b1', 'bad']);
    expect(ids(selectRuns([a, b], { status: 2 }))).toEqual(['a2']);
    expect(ids(selectRuns([a, b], { limit: 2 }))).toEqual(['a3', 'b2']);
  });

  it('keeps a range: stops at the first older run of each list, never at an unparsable time', () => {
    const day2 = {
      fromMs: Date.parse('2026-01-02T00:00:00Z'),
      toMs: Date.parse('2026-01-02T23:59:59Z'),
    };
    expect(ids(selectRuns([a, b], day2))).toEqual(['b2', 'a2']);
    expect(ids(selectRuns([a], day2))).toEqual(['a2']);
    expect(ids(selectRuns([b, a], { fromMs: Date.parse('2026-01-01T00:00:00Z') }))).toEqual([
      'a3',
      'b2',
      'a2',
      'a1',
    ]);
  });
});
