import type { RunSummaryRecord } from '@trellis/services';
import { ByteBoundedLru } from './byte-bounded-lru.js';
import {
  runSummariesJsonBody,
  sameSummaries,
  type BuiltListing,
  type ListingBody,
} from './run-summary-json.js';

/** Listings kept at most (the least recently answered goes first). */
export const MAX_CACHED_LISTINGS = 16;
/**
 * Bytes kept at most over all listings: bodies, 12 bytes a run (its number and offset), and the
 * key and tail (2 bytes a character; the head is the route's one constant). A kept listing holds
 * nothing else: no summary object.
 */
export const MAX_CACHED_LISTING_BYTES = 32 * 1024 * 1024;

/** What a kept listing holds, in bytes. */
export const listingCost = (key: string, b: BuiltListing): number =>
  b.body.length + b.ids.byteLength + b.offsets.byteLength + 2 * (key.length + b.tail.length);

/**
 * The last body of each recent listing (by a key naming its query), answered again while the
 * store hands over the same summary objects in the same order. Stores replace a summary object
 * when its run changes and never change one in place (run-summary-json.ts), so comparing the
 * objects (10,000 look-ups of their numbers, run-summary-json.ts) tells an unchanged listing from a changed one without a
 * version number: a run changed, added or deleted makes a new body, built from the old one's
 * bytes for the runs still in it. Never stale, and bounded: `MAX_CACHED_LISTINGS` listings and
 * `MAX_CACHED_LISTING_BYTES` in all (a body over the budget is answered, not kept). A listing
 * that shares no summary with its kept one is answered, not kept: the store made new objects
 * (PostgreSQL over its cache cap reads each listing from the database), so no later one can hit.
 */
export class ListingBodyCache {
  readonly #entries: ByteBoundedLru<BuiltListing>;

  constructor(opts: { maxEntries?: number; maxBytes?: number } = {}) {
    this.#entries = new ByteBoundedLru(
      opts.maxEntries ?? MAX_CACHED_LISTINGS,
      opts.maxBytes ?? MAX_CACHED_LISTING_BYTES,
      listingCost,
    );
  }

  /** Bytes held now (bodies and run lists). */
  get bytes(): number {
    return this.#entries.bytes;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The body of `${head}[runs...]${tail}`: the kept one when nothing in it changed. */
  body(key: string, head: string, runs: readonly RunSummaryRecord[], tail: string): ListingBody {
    const old = this.#entries.take(key);
    if (
      old !== undefined &&
      old.head === head &&
      old.tail === tail &&
      sameSummaries(old.ids, runs)
    ) {
      this.#entries.set(key, old);
      return old;
    }
    const built = runSummariesJsonBody(head, runs, tail, old);
    const renewed = old !== undefined && old.ids.length > 0 && runs.length > 0;
    if (!(renewed && built.reused === 0)) this.#entries.set(key, built);
    return built;
  }
}
