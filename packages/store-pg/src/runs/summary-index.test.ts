import { describe, expect, it } from 'vitest';
import type { RunSummary } from '@trellis/store';
import type { RunKey } from './run-rows.js';
import { SummaryIndex } from './summary-index.js';

const summary = (name: string, dagRunId: string, createdAt: string, over = {}): RunSummary => ({
  name,
  dagRunId,
  root: { name, dagRunId },
  status: 4,
  createdAt,
  queuedAt: '',
  startedAt: '',
  finishedAt: '',
  log: '',
  params: [],
  error: '',
  queue: name,
  revision: 0,
  ...over,
});
const key = (s: RunSummary): RunKey => ({
  rootName: s.root.name,
  rootRunId: s.root.dagRunId,
  name: s.name,
  dagRunId: s.dagRunId,
});
const put = (ix: SummaryIndex, s: RunSummary): void => ix.put(key(s), s);
const ids = (xs: RunSummary[]): string[] => xs.map((s) => s.dagRunId);

describe('SummaryIndex', () => {
  it('keeps each DAG newest first, ties by id descending, unparsable times last', () => {
    const ix = new SummaryIndex();
    put(ix, summary('etl', 'b', '2026-01-01T00:00:01Z'));
    put(ix, summary('etl', 'x', 'not a time'));
    put(ix, summary('etl', 'a', '2026-01-01T00:00:01.000Z'));
    put(ix, summary('etl', 'c', '2026-01-01T00:00:02Z'));
    expect(ids(ix.select({ name: 'etl' }))).toEqual(['c', 'b', 'a', 'x']);
    expect(ids(ix.select({ name: 'etl', limit: 2 }))).toEqual(['c', 'b']);
    expect(ids(ix.select({}))).toEqual(['c', 'b', 'a', 'x']);
  });

  it('moves a run whose creation time changed, replaces one that did not, and forgets one removed', () => {
    const ix = new SummaryIndex();
    const a = summary('etl', 'a', '2026-01-01T00:00:01Z');
    put(ix, a);
    put(ix, summary('etl', 'b', '2026-01-01T00:00:02Z'));
    put(ix, { ...a, createdAt: '2026-01-01T00:00:03Z' });
    expect(ids(ix.select({ name: 'etl' }))).toEqual(['a', 'b']);
    put(ix, { ...a, createdAt: '2026-01-01T00:00:03Z', error: 'boom' });
    expect(ix.select({ name: 'etl' })[0]?.error).toBe('boom');
    ix.remove(key(a));
    ix.remove(key(a));
    expect(ids(ix.select({ name: 'etl' }))).toEqual(['b']);
    expect(ix.size).toBe(1);
  });

  it('lists children only when asked, merged with the top-level runs in time order', () => {
    const ix = new SummaryIndex();
    const root = summary('etl', 'r', '2026-01-01T00:00:01Z');
    put(ix, root);
    const child = summary('etl', 'c', '2026-01-01T00:00:02Z', {
      root: { name: 'etl', dagRunId: 'r' },
      parent: { name: 'etl', dagRunId: 'r' },
    });
    ix.put({ rootName: 'etl', rootRunId: 'r', name: 'etl', dagRunId: 'c' }, child);
    expect(ids(ix.select({ name: 'etl' }))).toEqual(['r']);
    expect(ids(ix.select({ name: 'etl', includeChildren: true }))).toEqual(['c', 'r']);
    expect(ids(ix.select({ includeChildren: true, limit: 1 }))).toEqual(['c']);
  });
});
