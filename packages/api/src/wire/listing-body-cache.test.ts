import { describe, expect, it } from 'vitest';
import { RunStatus } from '@trellis/core';
import type { RunSummaryRecord } from '@trellis/services';
import { ListingBodyCache, listingCost } from './listing-body-cache.js';
import { runSummariesJsonBody, type BuiltListing } from './run-summary-json.js';

const summary = (id: string, extra: Partial<RunSummaryRecord> = {}): RunSummaryRecord => ({
  name: 'etl',
  dagRunId: id,
  root: { name: 'etl', dagRunId: id },
  status: RunStatus.Succeeded,
  createdAt: '2026-01-01T00:00:00.000Z',
  queuedAt: '',
  startedAt: '2026-01-01T00:00:00.000Z',
  finishedAt: '2026-01-01T00:00:01.000Z',
  log: `/logs/etl/${id}/run.log`,
  params: [{ name: 'CITY', value: id.length % 2 === 0 ? 'Zürich 東京' : 'Oslo' }],
  error: '',
  queue: 'etl',
  revision: 3,
  ...extra,
});

const many = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => summary(`run-${from + i}`));

/** The body built from nothing: what every answer must equal byte for byte. */
const fresh = (runs: readonly RunSummaryRecord[], tail = '}') =>
  runSummariesJsonBody('{"dagRuns":', runs, tail).body.toString();

describe('ListingBodyCache', () => {
  it('answers the kept body while the listing holds the same summary objects', () => {
    const c = new ListingBodyCache();
    const runs = many(5);
    const a = c.body('k', '{"dagRuns":', runs, '}');
    const b = c.body('k', '{"dagRuns":', [...runs], '}');
    expect(b.body).toBe(a.body);
    expect(b.etag).toBe(a.etag);
  });

  it('makes a new body when a run changes, appears or is deleted', () => {
    const c = new ListingBodyCache();
    let runs = many(6);
    const first = c.body('k', '{"dagRuns":', runs, '}');
    runs = runs.map((r, i) => (i === 2 ? { ...r, status: RunStatus.Failed } : r));
    const changed = c.body('k', '{"dagRuns":', runs, '}');
    expect(changed.body.toString()).toBe(fresh(runs));
    expect(changed.etag).not.toBe(first.etag);
    runs = [summary('new'), ...runs];
    expect(c.body('k', '{"dagRuns":', runs, '}').body.toString()).toBe(fresh(runs));
    runs = runs.filter((_, i) => i !== 3);
    expect(c.body('k', '{"dagRuns":', runs, '}').body.toString()).toBe(fresh(runs));
    expect(c.body('k', '{"dagRuns":', [], '}').body.toString()).toBe(fresh([]));
  });

  it('splices any reordering of kept and new summaries into the same bytes as a fresh build', () => {
    const c = new ListingBodyCache();
    const pool = many(40);
    let seed = 7;
    const rand = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    for (let round = 0; round < 50; round++) {
      const runs = pool.filter(() => rand(4) !== 0);
      for (let k = 0; k < 3; k++) runs.splice(rand(runs.length + 1), 0, summary(`x-${round}-${k}`));
      if (rand(2) === 0) runs.reverse();
      const tail = `,"pagination":{"currentPage":${rand(3)}}}`;
      expect(c.body('k', '{"dagRuns":', runs, tail).body.toString()).toBe(fresh(runs, tail));
    }
  });

  it('keeps listings apart by key, and a change in the tail (the pagination) is a change', () => {
    const c = new ListingBodyCache();
    const runs = many(3);
    const one = c.body('one', '{"dagRuns":', runs, '}');
    const two = c.body('two', '{"dagRuns":', runs.slice(1), '}');
    expect(two.body.toString()).toBe(fresh(runs.slice(1)));
    expect(c.body('one', '{"dagRuns":', runs, '}').body).toBe(one.body);
    const paged = c.body('one', '{"dagRuns":', runs, ',"pagination":{}}');
    expect(paged.body.toString()).toBe(fresh(runs, ',"pagination":{}}'));
  });

  it('stays within its bounds: listings by count and bytes, the least recent going first', () => {
    const runs = many(100);
    const size = Buffer.byteLength(fresh(runs)) + runs.length * 12;
    const c = new ListingBodyCache({ maxEntries: 3, maxBytes: size * 2 + 10 });
    for (const k of ['a', 'b', 'c']) c.body(k, '{"dagRuns":', runs, '}');
    expect(c.size).toBe(2);
    expect(c.bytes).toBeLessThanOrEqual(size * 2 + 10);
    const small = new ListingBodyCache({ maxEntries: 3, maxBytes: size - 1 });
    expect(small.body('a', '{"dagRuns":', runs, '}').body.toString()).toBe(fresh(runs));
    expect(small.size).toBe(0);
    expect(small.bytes).toBe(0);
    const counted = new ListingBodyCache({ maxEntries: 2 });
    const a = counted.body('a', '{"dagRuns":', runs, '}');
    counted.body('b', '{"dagRuns":', runs, '}');
    counted.body('a', '{"dagRuns":', runs, '}'); // a is now the most recent
    counted.body('c', '{"dagRuns":', runs, '}');
    expect(counted.size).toBe(2);
    expect(counted.body('a', '{"dagRuns":', runs, '}').body).toBe(a.body);
  });

  it('holds no summary object in a kept listing, and counts its key, tail and run numbers', () => {
    const c = new ListingBodyCache();
    const runs = many(50);
    const key = 'GET /dag-runs/etl?page=1&perPage=50';
    const tail = ',"pagination":{"currentPage":1}}';
    const kept = c.body(key, '{"dagRuns":', runs, tail);
    expect(c.body(key, '{"dagRuns":', [...runs], tail)).toBe(kept);
    expect(reaches(kept, new Set(runs))).toBe(false);
    const expected = kept.body.length + runs.length * 12 + 2 * (key.length + tail.length);
    expect(listingCost(key, kept as BuiltListing)).toBe(expected);
    expect(c.bytes).toBe(expected);
  });

  it('does not keep a listing whose store made new summary objects again (no hit possible)', () => {
    const c = new ListingBodyCache();
    const first = c.body('k', '{"dagRuns":', many(30), '}');
    const again = c.body('k', '{"dagRuns":', many(30), '}'); // equal runs, new objects
    expect(again.body.toString()).toBe(first.body.toString());
    expect(c.size).toBe(0);
    expect(c.bytes).toBe(0);
    const runs = many(30);
    const kept = c.body('k', '{"dagRuns":', runs, '}');
    expect(c.size).toBe(1);
    expect(c.body('k', '{"dagRuns":', runs, '}')).toBe(kept);
  });
});

/** True when `value`'s own properties lead (through objects and arrays) to one of `targets`. */
const reaches = (
  value: unknown,
  targets: ReadonlySet<unknown>,
  seen = new Set<unknown>(),
): boolean => {
  if (targets.has(value)) return true;
  if (typeof value !== 'object' || value === null || seen.has(value)) return false;
  if (ArrayBuffer.isView(value)) return false;
  seen.add(value);
  return Object.values(value).some((v) => reaches(v, targets, seen));
};
