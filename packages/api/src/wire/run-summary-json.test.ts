import { describe, expect, it } from 'vitest';
import { RunStatus } from '@trellis/core';
import type { RunSummaryRecord } from '@trellis/services';
import { runSummariesJsonBody } from './run-summary-json.js';
import { toApiRunSummary } from './run.mapper.js';

const summary = (id: string, extra: Partial<RunSummaryRecord> = {}): RunSummaryRecord => ({
  name: 'etl',
  dagRunId: id,
  root: { name: 'etl', dagRunId: id },
  status: 4,
  createdAt: '2026-01-01T00:00:00.000Z',
  queuedAt: '',
  startedAt: '2026-01-01T00:00:00.000Z',
  finishedAt: '2026-01-01T00:00:01.000Z',
  log: `/logs/etl/${id}/run.log`,
  params: [{ name: 'DAY', value: 'mon' }],
  error: '',
  queue: 'etl',
  revision: 3,
  ...extra,
});

/** What `res.json(body)` sent before the texts were kept. */
const stringified = (runs: readonly RunSummaryRecord[], tail = '') =>
  `{"dagRuns":${JSON.stringify(runs.map((r) => toApiRunSummary(r)))}${tail}}`;

describe('runSummariesJsonBody', () => {
  it('gives the bytes JSON.stringify gives, in the spec field order, non-ASCII text included', () => {
    const runs = [
      summary('a'),
      summary('b', {
        params: [{ name: 'CITY', value: 'Zürich "東京" \u2028 😀' }],
        parent: { name: 'up', dagRunId: 'p1' },
        root: { name: 'up', dagRunId: 'r1' },
        status: RunStatus.Failed,
      }),
      summary('c', { name: 'naïve', log: '' }),
    ];
    const { body } = runSummariesJsonBody('{"dagRuns":', runs, '}');
    expect(body.toString('utf8')).toBe(stringified(runs));
    expect(body.equals(Buffer.from(stringified(runs)))).toBe(true);
    expect(Object.keys(JSON.parse(body.toString()).dagRuns[0])).toEqual([
      'rootDAGRunName',
      'rootDAGRunId',
      'parentDAGRunName',
      'parentDAGRunId',
      'dagRunId',
      'name',
      'status',
      'statusLabel',
      'queuedAt',
      'startedAt',
      'finishedAt',
      'log',
      'params',
    ]);
  });

  it('answers an empty list and a tail', () => {
    const tail = ',"pagination":{"totalRecords":0}';
    expect(runSummariesJsonBody('{"dagRuns":', [], `${tail}}`).body.toString()).toBe(
      stringified([], tail),
    );
  });

  it('shows a changed run: a store replaces the summary object, and the new object is read', () => {
    const before = summary('a');
    expect(runSummariesJsonBody('', [before], '').body.toString()).toContain('"status":4');
    const after: RunSummaryRecord = { ...before, status: RunStatus.Failed };
    expect(runSummariesJsonBody('', [after], '').body.toString()).toContain('"status":2');
  });

  it('tags a listing with an ETag that changes when a run, the order or the pagination does', () => {
    const a = summary('a');
    const b = summary('b');
    const tag = (runs: RunSummaryRecord[], tail = '}') =>
      runSummariesJsonBody('{"dagRuns":', runs, tail).etag;
    expect(tag([a, b])).toBe(tag([a, b]));
    expect(tag([a, b])).toMatch(/^W\/"[^"]+"$/);
    expect(tag([b, a])).not.toBe(tag([a, b]));
    expect(tag([a])).not.toBe(tag([a, b]));
    expect(tag([a, { ...b, status: RunStatus.Failed }])).not.toBe(tag([a, b]));
    expect(tag([a, b], ',"pagination":{"currentPage":2}}')).not.toBe(
      tag([a, b], ',"pagination":{"currentPage":1}}'),
    );
  });
});
