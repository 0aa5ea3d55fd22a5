import type { RunListFilter } from '@trellis/services';
import type { RunSummary } from './run-summary.js';

/** Which runs `listRuns` returns: the services' filter, and whether children count too. */
export interface RunFilter extends RunListFilter {
  /**
   * Also return child runs (stored under their root runs). @default false
   * (assumption: `GET /dag-runs` lists top-level runs, as the peer does; children are reached
   * through their root.)
   */
  readonly includeChildren?: boolean;
}

/** A summary with its creation time parsed once, as the index keeps it. */
export interface IndexedRun {
  readonly summary: RunSummary;
  /** `createdAt` in Unix milliseconds; `NaN` when it is not a timestamp. */
  readonly createdMs: number;
}

/** True when `run` passes every filter field except `limit` and `name`. */
export const matchesRunFilter = (run: IndexedRun, f: RunFilter): boolean => {
  const s = run.summary;
  if (!f.includeChildren && s.parent !== undefined) return false;
  if (f.status !== undefined && s.status !== f.status) return false;
  if (f.names !== undefined && !f.names.includes(s.name)) return false;
  if (f.workerId !== undefined && s.owner?.workerId !== f.workerId) return false;
  if (f.fromMs !== undefined && !(run.createdMs >= f.fromMs)) return false;
  if (f.toMs !== undefined && !(run.createdMs <= f.toMs)) return false;
  if (
    f.dagRunIdContains !== undefined &&
    !s.dagRunId.toLowerCase().includes(f.dagRunIdContains.toLowerCase())
  )
    return false;
  return true;
};

/** `createdAt` as a sortable number; an unparsable one sorts as the oldest. */
const sortTime = (r: IndexedRun): number => (Number.isNaN(r.createdMs) ? -Infinity : r.createdMs);

/**
 * Newest first by `createdAt` (compared as instants: `...05Z` and `...05.123Z` do not sort as
 * text); ties by id, descending.
 */
export const newestFirst = (a: IndexedRun, b: IndexedRun): number => {
  const d = sortTime(b) - sortTime(a);
  if (d !== 0 && !Number.isNaN(d)) return d;
  const x = a.summary.dagRunId;
  const y = b.summary.dagRunId;
  return x < y ? 1 : x > y ? -1 : 0;
};

/** Wraps a summary for the index. */
export const toIndexedRun = (summary: RunSummary): IndexedRun => ({
  summary,
  createdMs: Date.parse(summary.createdAt),
});

/**
 * The summaries of `lists` (each sorted newest first) that match `filter`, newest first, at most
 * `filter.limit`. `filter.name` is matched against each run's own DAG name.
 */
export const selectRuns = (
  lists: readonly (readonly IndexedRun[])[],
  filter: RunFilter,
): RunSummary[] => {
  const limit = filter.limit ?? Infinity;
  const picked = (r: IndexedRun): boolean =>
    (filter.name === undefined || r.summary.name === filter.name) && matchesRunFilter(r, filter);
  // Each list is newest first: past `fromMs` the rest are older (an unparsable time sorts last
  // and fails the test, so it never stops the loop early).
  const from = filter.fromMs ?? -Infinity;
  const out: RunSummary[] = [];
  if (lists.length === 1) {
    // One list is sorted already: stop at the limit.
    for (const r of lists[0] ?? []) {
      if (out.length >= limit || r.createdMs < from) break;
      if (picked(r)) out.push(r.summary);
    }
    return out;
  }
  // Several: filter first, then sort only the matches (a day's runs or the running ones of
  // 1,000 DAGs' histories sort a few, not all 10,000).
  const matched: IndexedRun[] = [];
  for (const list of lists)
    for (const r of list) {
      if (r.createdMs < from) break;
      if (picked(r)) matched.push(r);
    }
  matched.sort(newestFirst);
  for (const r of matched) {
    if (out.length >= limit) break;
    out.push(r.summary);
  }
  return out;
};
