import type { RunListFilter } from '@trellis/services';
import type { RunSummary } from '@trellis/store';
import type { RunKey } from './run-rows.js';

/** The listing's filter: the services' one, and whether child runs count too. */
export type ListFilter = RunListFilter & { readonly includeChildren?: boolean };

/** One run in memory: its summary and its creation time as a sort key. */
interface Entry {
  summary: RunSummary;
  /** `createdAt` in Unix ms; -Infinity when it is not a timestamp (sorts as the oldest). */
  sortMs: number;
}

const sortMsOf = (s: RunSummary): number => {
  const ms = Date.parse(s.createdAt);
  return Number.isNaN(ms) ? -Infinity : ms;
};

/** Newest first by creation time, ties by id descending (as `NEWEST_FIRST` and the file store). */
const newestFirst = (a: Entry, b: Entry): number => {
  if (a.sortMs !== b.sortMs) return a.sortMs > b.sortMs ? -1 : 1;
  const x = a.summary.dagRunId;
  const y = b.summary.dagRunId;
  return x < y ? 1 : x > y ? -1 : 0;
};

/** The first index of `arr` (sorted newest first) at which `e` sorts before or with. */
const lowerBound = (arr: readonly Entry[], e: Entry): number => {
  let lo = 0;
  let hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (newestFirst(arr[mid] as Entry, e) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
};

/**
 * True when a run passes every filter field except `name` and `limit`: the same rules as the
 * file store's `matchesRunFilter` (packages/store/src/runs/run-filter.ts); the store
 * conformance suite holds both to them.
 */
const matches = (e: Entry, f: ListFilter): boolean => {
  const s = e.summary;
  if (f.includeChildren !== true && s.parent !== undefined) return false;
  if (f.status !== undefined && s.status !== f.status) return false;
  if (f.names !== undefined && !f.names.includes(s.name)) return false;
  if (f.workerId !== undefined && s.owner?.workerId !== f.workerId) return false;
  if (f.fromMs !== undefined && !(e.sortMs >= f.fromMs)) return false;
  if (f.toMs !== undefined && !(e.sortMs <= f.toMs)) return false;
  if (
    f.dagRunIdContains !== undefined &&
    !s.dagRunId.toLowerCase().includes(f.dagRunIdContains.toLowerCase())
  )
    return false;
  return true;
};

const keyText = (k: RunKey): string =>
  `${k.rootName}\u0000${k.rootRunId}\u0000${k.name}\u0000${k.dagRunId}`;

/** True when the filter asks for nothing but top-level runs of one DAG (at most `limit`). */
const nameOnly = (f: ListFilter): boolean =>
  f.includeChildren !== true &&
  f.status === undefined &&
  f.names === undefined &&
  f.workerId === undefined &&
  f.fromMs === undefined &&
  f.toMs === undefined &&
  f.dagRunIdContains === undefined;

type Lists = Map<string, Entry[]>;

/**
 * Run summaries in memory, by key and per DAG name newest first (top-level runs and child runs
 * apart; each list kept sorted on every change, so a listing never sorts a whole history). The
 * summaries are the objects listings return, shared, as the file store's index returns its own:
 * callers do not change them.
 */
export class SummaryIndex {
  readonly #byKey = new Map<string, Entry>();
  readonly #top: Lists = new Map();
  readonly #children: Lists = new Map();

  get size(): number {
    return this.#byKey.size;
  }

  clear(): void {
    this.#byKey.clear();
    this.#top.clear();
    this.#children.clear();
  }

  /** Adds or replaces the run under `key`. */
  put(key: RunKey, summary: RunSummary): void {
    const k = keyText(key);
    const old = this.#byKey.get(k);
    const sortMs = sortMsOf(summary);
    if (old !== undefined && old.sortMs === sortMs && old.summary.name === summary.name) {
      old.summary = summary; // same place in its list (a run's parent never changes)
      return;
    }
    if (old !== undefined) this.#unlist(old);
    const e: Entry = { summary, sortMs };
    this.#byKey.set(k, e);
    const lists = this.#listsOf(summary);
    let list = lists.get(summary.name);
    if (list === undefined) lists.set(summary.name, (list = []));
    list.splice(lowerBound(list, e), 0, e);
  }

  /** Forgets the run under `key` (nothing when it is not there). */
  remove(key: RunKey): void {
    const k = keyText(key);
    const old = this.#byKey.get(k);
    if (old === undefined) return;
    this.#byKey.delete(k);
    this.#unlist(old);
  }

  #listsOf(s: RunSummary): Lists {
    return s.parent === undefined ? this.#top : this.#children;
  }

  #unlist(e: Entry): void {
    const lists = this.#listsOf(e.summary);
    const list = lists.get(e.summary.name);
    if (list === undefined) return;
    let i = lowerBound(list, e);
    while (i < list.length && list[i] !== e) i++;
    if (i < list.length) list.splice(i, 1);
    if (list.length === 0) lists.delete(e.summary.name);
  }

  /** The summaries matching `f`, newest first, at most `f.limit`. */
  select(f: ListFilter): RunSummary[] {
    const limit = f.limit === undefined ? Infinity : Math.max(0, Math.floor(f.limit));
    if (f.name !== undefined && nameOnly(f))
      return (this.#top.get(f.name) ?? []).slice(0, limit).map((e) => e.summary);
    const maps = f.includeChildren === true ? [this.#top, this.#children] : [this.#top];
    const names =
      f.name !== undefined ? [f.name] : [...new Set(f.names ?? maps.flatMap((m) => [...m.keys()]))];
    const lists = maps.flatMap((m) => names.map((n) => m.get(n) ?? []));
    const from = f.fromMs ?? -Infinity;
    const out: RunSummary[] = [];
    if (lists.length === 1) {
      for (const e of lists[0] ?? []) {
        if (out.length >= limit || e.sortMs < from) break;
        if (matches(e, f)) out.push(e.summary);
      }
      return out;
    }
    // several lists: filter each (sorted, so stop at `fromMs`), then sort only the matches
    const picked: Entry[] = [];
    for (const list of lists)
      for (const e of list) {
        if (e.sortMs < from) break;
        if (matches(e, f)) picked.push(e);
      }
    picked.sort(newestFirst);
    return picked.slice(0, limit).map((e) => e.summary);
  }
}
