import { createHash } from 'node:crypto';
import type { DagRunRecord } from '@trellis/spec';
import { toApiRunSummary, toGridData } from './run.mapper.js';
import { ByteBoundedLru } from './byte-bounded-lru.js';
import type { ListingBody } from './run-summary-json.js';

/** DAG files whose answer is kept at most (the least recently answered goes first). */
export const MAX_KEPT_DAG_RUNS = 64;
/** Bytes kept at most over all DAG files (bodies, keys, tags); a body over it is not kept. */
export const MAX_KEPT_DAG_RUNS_BYTES = 32 * 1024 * 1024;

/**
 * A kept answer is made again after this long (ms) even under the same stamp: the bound on
 * what a write the stamp missed can cost (a file-store process that died between a record's
 * rename and its note, or a process of an earlier version writing the same data folder).
 */
export const MAX_KEPT_AGE_MS = 30_000;

/** What a kept answer was made from: the store's change stamp, the DAG's name and step order. */
export interface DagRunsKey {
  /** `RunReads.changeStamp`, taken before the runs were read; undefined: keep nothing. */
  readonly stamp: string | undefined;
  readonly dagName: string;
  readonly stepOrder: readonly string[];
}

interface Kept extends ListingBody {
  readonly key: string;
  /** When it was made (`now()`). */
  readonly at: number;
}

/** What a kept answer holds, in bytes (strings at 2 bytes a character). */
const keptCost = (fileName: string, k: Kept): number =>
  k.body.length + 2 * (fileName.length + k.key.length + k.etag.length);

const textOf = (k: DagRunsKey): string | undefined =>
  k.stamp === undefined ? undefined : `${k.dagName}\n${k.stamp}\n${JSON.stringify(k.stepOrder)}`;

/**
 * Express's own weak ETag of a body (the `etag` package: length and SHA-1), so a kept answer
 * carries the tag the route's answers always had, the same on every coordinator.
 */
const expressEtag = (body: Buffer): string =>
  `W/"${body.length.toString(16)}-${createHash('sha1').update(body).digest('base64').slice(0, 27)}"`;

/** `{dagRuns, gridData}` as the bytes `res.json` would send. */
export const dagRunsBody = (stepOrder: readonly string[], runs: readonly DagRunRecord[]): Buffer =>
  Buffer.from(
    JSON.stringify({
      dagRuns: runs.map((x) => toApiRunSummary(x)),
      gridData: toGridData(runs, stepOrder),
    }),
  );

/**
 * The last answer of GET /dags/{fileName}/dag-runs per DAG file, answered again while the
 * store's change stamp of the DAG, its name and its step order are the same: the stamp changes
 * with every write of a record of the DAG's runs, by any process (docs/decisions.md, "A per-DAG
 * change stamp"), so the 30 records need not be read, mapped and serialised again; at most
 * `MAX_KEPT_AGE_MS` long.
 */
export class DagRunsBodyCache {
  readonly #entries: ByteBoundedLru<Kept>;
  readonly #maxAgeMs: number;
  readonly #now: () => number;

  constructor(
    max = MAX_KEPT_DAG_RUNS,
    maxAgeMs = MAX_KEPT_AGE_MS,
    now: () => number = () => performance.now(),
    maxBytes = MAX_KEPT_DAG_RUNS_BYTES,
  ) {
    this.#entries = new ByteBoundedLru(max, maxBytes, keptCost);
    this.#maxAgeMs = maxAgeMs;
    this.#now = now;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Bytes held now. */
  get bytes(): number {
    return this.#entries.bytes;
  }

  /** The kept answer of `fileName` if it was made under `key`, else undefined. */
  get(fileName: string, key: DagRunsKey): ListingBody | undefined {
    const kept = this.#entries.peek(fileName);
    const text = textOf(key);
    if (kept === undefined || text === undefined || kept.key !== text) return undefined;
    if (this.#now() - kept.at >= this.#maxAgeMs) return undefined;
    this.#entries.set(fileName, kept); // answered: the most recent again
    return kept;
  }

  /**
   * The answer of `fileName` made now from records read after `key.stamp` was taken; kept under
   * it (unless the stamp is undefined, or the body is over the byte budget). A body equal to the
   * kept one keeps its tag object.
   */
  put(fileName: string, key: DagRunsKey, body: Buffer): ListingBody {
    const old = this.#entries.take(fileName);
    const made = old?.body.equals(body) === true ? old : { body, etag: expressEtag(body) };
    const text = textOf(key);
    if (text === undefined) return made;
    this.#entries.set(fileName, { key: text, body: made.body, etag: made.etag, at: this.#now() });
    return made;
  }
}
