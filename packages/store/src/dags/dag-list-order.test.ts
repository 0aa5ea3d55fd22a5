import { describe, expect, it } from 'vitest';
import { compareListRows, matchesListFilter, type ListRow } from './dag-list-order.js';

const row = (key: string, name: string, nextRunMs?: number, tags: string[] = []): ListRow => ({
  key,
  name: name.toLowerCase(),
  fileName: key.toLowerCase(),
  tags: new Set(tags),
  nextRunMs,
});

const rows = [
  row('b', 'Beta', 300),
  row('a', 'alpha'),
  row('c', 'gamma', 100),
  row('d', 'ALPHA', 200),
  row('e', 'delta'),
];
const sorted = (sort: 'name' | 'nextRun', order: 'asc' | 'desc'): string[] =>
  [...rows].sort(compareListRows({ sort, order })).map((r) => r.key);

describe('DAG list order', () => {
  it('sorts by DAG name ignoring case, ties by file name, reversed by desc', () => {
    expect(sorted('name', 'asc')).toEqual(['a', 'd', 'b', 'e', 'c']);
    expect(sorted('name', 'desc')).toEqual(['c', 'e', 'b', 'd', 'a']);
  });

  it('sorts by next run with the unscheduled last in both orders', () => {
    expect(sorted('nextRun', 'asc')).toEqual(['c', 'd', 'b', 'a', 'e']);
    expect(sorted('nextRun', 'desc')).toEqual(['b', 'd', 'c', 'e', 'a']);
  });

  it('breaks next-run ties by name', () => {
    const tie = [row('z', 'zed', 5), row('y', 'why', 5)];
    expect(tie.sort(compareListRows({ sort: 'nextRun', order: 'asc' })).map((r) => r.key)).toEqual([
      'y',
      'z',
    ]);
  });
});

describe('DAG list filter', () => {
  const r = row('nightly-etl', 'Warehouse', undefined, ['etl', 'daily']);

  it('matches name as a case-insensitive substring of the file name or the DAG name', () => {
    expect(matchesListFilter({ name: 'ETL' })(r)).toBe(true);
    expect(matchesListFilter({ name: 'house' })(r)).toBe(true);
    expect(matchesListFilter({ name: 'nope' })(r)).toBe(false);
    expect(matchesListFilter({ name: '' })(r)).toBe(true);
  });

  it('matches tag exactly, ignoring case', () => {
    expect(matchesListFilter({ tag: 'DAILY' })(r)).toBe(true);
    expect(matchesListFilter({ tag: 'dai' })(r)).toBe(false);
  });
});
