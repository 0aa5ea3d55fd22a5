import type { RunSummaryRecord } from '@trellis/services';
import { runSummariesJsonBody, type BuiltListing, type ListingBody } from './run-summary-json.js';

/** Listings kept at most (the least recently answered goes first). */
export const MAX_CACHED_LISTINGS = 16;
/** Bytes kept at most over all listings: bodies, plus 12 bytes a run for their run lists. */
export const MAX_CACHED_LISTING_BYTES = 32 * 1024 * 1024;

const costOf = (b: BuiltListing): number => b.body.length + b.runs.length * 12;

/** True when both lists hold the same summary objects in the same order. */
const sameRuns = (a: readonly RunSummaryRecord[], b: readonly RunSummaryRecord[]): boolean => {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
};

/**
 * The last body of each recent listing (by a key naming its query), answered again while the
 * store hands over the same summary objects in the same order. Stores replace a summary object
 * when its run changes and never change one in place (run-summary-json.ts), so comparing the
 * objects (10,000 pointer comparisons) tells an unchanged listing from a changed one without a
 * version number: a run changed, added or deleted makes a new body, built from the old one's
 * bytes for the runs still in it. Never stale, and bounded: `MAX_CACHED_LISTINGS` listings and
 * `MAX_CACHED_LISTING_BYTES` in all (a body over the budget is answered, not kept).
 */
export class ListingBodyCache {
  readonly #entries = new Map<string, BuiltListing>();
  #bytes = 0;
  readonly #maxEntries: number;
  readonly #maxBytes: number;

  constructor(opts: { maxEntries?: number; maxBytes?: number } = {}) {
    this.#maxEntries = opts.maxEntries ?? MAX_CACHED_LISTINGS;
    this.#maxBytes = opts.maxBytes ?? MAX_CACHED_LISTING_BYTES;
  }

  /** Bytes held now (bodies and run lists). */
  get bytes(): number {
    return this.#bytes;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The body of `${head}[runs...]${tail}`: the kept one when nothing in it changed. */
  body(key: string, head: string, runs: readonly RunSummaryRecord[], tail: string): ListingBody {
    const old = this.#entries.get(key);
    if (old !== undefined) {
      this.#entries.delete(key);
      this.#bytes -= costOf(old);
      if (old.head === head && old.tail === tail && sameRuns(old.runs, runs)) {
        this.#keep(key, old);
        return old;
      }
    }
    const built = runSummariesJsonBody(head, runs, tail, old);
    this.#keep(key, built);
    return built;
  }

  #keep(key: string, b: BuiltListing): void {
    if (costOf(b) > this.#maxBytes) return;
    this.#entries.set(key, b);
    this.#bytes += costOf(b);
    for (const [k, e] of this.#entries) {
      if (this.#entries.size <= this.#maxEntries && this.#bytes <= this.#maxBytes) break;
      this.#entries.delete(k);
      this.#bytes -= costOf(e);
    }
  }
}
