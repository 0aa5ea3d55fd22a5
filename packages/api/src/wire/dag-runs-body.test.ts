import { describe, expect, it } from 'vitest';
import { NodeStatus, RunStatus } from '@trellis/core';
import type { DagRunRecord, NodeRecord } from '@trellis/spec';
import { makeRecord } from '@trellis/testkit';
import { DagRunsBodyCache } from './dag-runs-body.js';
import { toApiRunSummary, toGridData } from './run.mapper.js';

const node = (name: string, status: NodeStatus): NodeRecord => ({
  step: { name, command: 'true' } as NodeRecord['step'],
  stdout: '',
  stderr: '',
  startedAt: '',
  finishedAt: '',
  status,
  retryCount: 0,
  doneCount: 0,
  retriedAt: '',
  children: [],
  childrenRepeated: [],
  error: '',
  outputs: {},
});

const run = (id: string, over: Partial<DagRunRecord> = {}): DagRunRecord =>
  makeRecord({
    dagRunId: id,
    status: RunStatus.Succeeded,
    revision: 4,
    params: [{ name: 'CITY', value: 'Zürich 東京' }],
    nodes: [node('extract', NodeStatus.Succeeded), node('load', NodeStatus.Succeeded)],
    ...over,
  });

const ORDER = ['extract', 'load'];

/** The body as the route made it before it was kept: what every answer must equal. */
const fresh = (runs: readonly DagRunRecord[], order: readonly string[] = ORDER): string =>
  JSON.stringify({
    dagRuns: runs.map((r) => toApiRunSummary(r)),
    gridData: toGridData(runs, order),
  });

describe('DagRunsBodyCache', () => {
  it('answers the kept body and tag while the runs are the same revisions', () => {
    const c = new DagRunsBodyCache();
    const a = c.body('etl', ORDER, [run('r2'), run('r1')]);
    expect(a.body.toString()).toBe(fresh([run('r2'), run('r1')]));
    const b = c.body('etl', ORDER, [run('r2'), run('r1')]); // read again: new objects
    expect(b.body).toBe(a.body);
    expect(b.etag).toBe(a.etag);
  });

  it('makes a new body for a new run, a new revision, a new status and a new step order', () => {
    const c = new DagRunsBodyCache();
    const first = c.body('etl', ORDER, [run('r1')]);
    const cases: [readonly string[], DagRunRecord[]][] = [
      [ORDER, [run('r2'), run('r1')]],
      [ORDER, [run('r2'), run('r1', { revision: 5, nodes: [node('extract', NodeStatus.Failed)] })]],
      [ORDER, [run('r2', { status: RunStatus.Failed }), run('r1', { revision: 5 })]],
      [
        ['load', 'extract'],
        [run('r2', { status: RunStatus.Failed }), run('r1', { revision: 5 })],
      ],
      [ORDER, [run('r2', { createdAt: '2026-02-01T00:00:00Z' }), run('r1', { revision: 5 })]],
    ];
    const tags = new Set([first.etag]);
    for (const [order, runs] of cases) {
      const got = c.body('etl', order, runs);
      expect(got.body.toString()).toBe(fresh(runs, order));
      tags.add(got.etag);
    }
    expect(tags.size).toBe(cases.length + 1);
  });

  it('keeps one body per DAG file, at most the bound, the least recently answered going first', () => {
    const c = new DagRunsBodyCache(2);
    const a = c.body('a', ORDER, [run('r1')]);
    c.body('b', ORDER, [run('r1')]);
    expect(c.body('a', ORDER, [run('r1')]).body).toBe(a.body); // a answered after b
    c.body('c', ORDER, [run('r1')]); // b goes
    expect(c.size).toBe(2);
    expect(c.body('a', ORDER, [run('r1')]).body).toBe(a.body);
  });
});
