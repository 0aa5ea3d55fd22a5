import { randomBytes } from 'node:crypto';
import type { RunSummaryRecord } from '@trellis/services';
import { toApiRunSummary } from './run.mapper.js';

/** A summary's JSON text, its length in UTF-8 bytes, and its number in this process. */
interface Fragment {
  readonly text: string;
  readonly bytes: number;
  readonly id: number;
}

/** Numbers fragments; with `BOOT`, the same number never names two texts (see `etag`). */
let made = 0;
const BOOT = randomBytes(6).toString('base64url');

/**
 * The JSON text of each listed summary, made once per summary object. Both stores hand listings
 * the summary objects their indexes keep (packages/store/src/index-file/index-state.ts,
 * packages/store-pg/src/runs/summary-index.ts) and replace an object when its run changes, never
 * change it in place; so a listing of 10,000 runs copies 10,000 texts made earlier instead of
 * building and serialising 10,000 objects per request. Weak: a summary the index dropped takes
 * its text with it.
 */
const fragments = new WeakMap<RunSummaryRecord, Fragment>();

const fragmentOf = (r: RunSummaryRecord): Fragment => {
  let f = fragments.get(r);
  if (f === undefined) {
    const text = JSON.stringify(toApiRunSummary(r));
    f = { text, bytes: Buffer.byteLength(text), id: ++made };
    fragments.set(r, f);
  }
  return f;
};

/** A listing's body and its entity tag. */
export interface ListingBody {
  readonly body: Buffer;
  /**
   * A weak ETag that changes when the body does, made from the fragments' numbers (unique in this
   * process, with a per-process prefix) instead of hashing megabytes of body as Express does.
   */
  readonly etag: string;
}

/** A listing body as built, and where each summary's text sits in it (to reuse unchanged parts). */
export interface BuiltListing extends ListingBody {
  readonly head: string;
  readonly tail: string;
  /**
   * The number of each listed summary's fragment, in order: not the summaries themselves, so a
   * kept listing holds no summary object (nor, through `fragments`, its text) once the store
   * dropped it (listing-body-cache.ts). A number names one summary object while it lives.
   */
  readonly ids: Float64Array;
  /** The byte offset in `body` of each summary's text. */
  readonly offsets: Uint32Array;
  /** Summaries whose bytes were copied from the `previous` listing (0 without one). */
  readonly reused: number;
}

/** True when `runs` are the summaries `ids` names, in the same order. */
export const sameSummaries = (ids: Float64Array, runs: readonly RunSummaryRecord[]): boolean => {
  if (ids.length !== runs.length) return false;
  for (let i = 0; i < runs.length; i++) {
    if (fragments.get(runs[i] as RunSummaryRecord)?.id !== ids[i]) return false;
  }
  return true;
};

/**
 * `${head}[s1,s2,...]${tail}` as UTF-8 bytes, each `s` the JSON of `toApiRunSummary(run)`: the
 * bytes `JSON.stringify` of the same object would give, written straight into one buffer (no
 * joined string of a whole history to make and then encode). With `previous` (an earlier body
 * of the same listing), summaries it holds are copied from its bytes, consecutive ones in one
 * copy, so a listing where one run changed encodes that run's text only.
 */
export const runSummariesJsonBody = (
  head: string,
  runs: readonly RunSummaryRecord[],
  tail: string,
  previous?: BuiltListing,
): BuiltListing => {
  const parts = runs.map(fragmentOf);
  let size = Buffer.byteLength(head) + Buffer.byteLength(tail) + 2 + Math.max(0, runs.length - 1);
  // two 32-bit FNV-1a lanes over the fragment numbers (distinct offsets): a 64-bit tag
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  for (const p of parts) {
    size += p.bytes;
    h1 = Math.imul(h1 ^ p.id, 0x01000193);
    h2 = Math.imul(h2 ^ (p.id * 31 + 7), 0x01000193) ^ (h2 >>> 15);
  }
  const out = Buffer.allocUnsafe(size);
  const offsets = new Uint32Array(runs.length);
  const ids = Float64Array.from(parts, (p) => p.id);
  let at = out.write(head, 0);
  out[at++] = 0x5b; // [
  const written = writeSummaries(out, at, { ids, parts, offsets }, previous);
  at = written.at;
  out[at++] = 0x5d; // ]
  out.write(tail, at);
  const tag = `${(h1 >>> 0).toString(36)}${(h2 >>> 0).toString(36)}`;
  return {
    body: out,
    etag: `W/"${BOOT}-${size.toString(36)}-${parts.length}-${tag}-${hashText(head + tail)}"`,
    head,
    tail,
    ids,
    offsets,
    reused: written.reused,
  };
};

/** The listing being written: its summaries, their fragments, and where each text goes. */
interface Writing {
  readonly ids: Float64Array;
  readonly parts: readonly Fragment[];
  readonly offsets: Uint32Array;
}

/**
 * Writes `s1,s2,...` into `out` from `at` (recording each text's offset); returns the end and
 * how many summaries were copied. A stretch of summaries that `previous` lists consecutively is
 * one copy of its bytes.
 */
const writeSummaries = (
  out: Buffer,
  at: number,
  { ids, parts, offsets }: Writing,
  previous: BuiltListing | undefined,
): { at: number; reused: number } => {
  const was = previous === undefined ? undefined : positions(previous.ids);
  let reused = 0;
  let i = 0;
  while (i < ids.length) {
    if (i > 0) out[at++] = 0x2c; // ,
    const j = was?.get(ids[i] as number);
    if (previous === undefined || j === undefined) {
      offsets[i] = at;
      at += out.write((parts[i] as Fragment).text, at);
      i++;
      continue;
    }
    let k = 1;
    while (i + k < ids.length && previous.ids[j + k] === ids[i + k]) k++;
    const from = previous.offsets[j] as number;
    const to = (previous.offsets[j + k - 1] as number) + (parts[i + k - 1] as Fragment).bytes;
    for (let m = 0; m < k; m++) offsets[i + m] = at + (previous.offsets[j + m] as number) - from;
    at += previous.body.copy(out, at, from, to);
    reused += k;
    i += k;
  }
  return { at, reused };
};

/** Each summary's place in a listing, by its fragment's number. */
const positions = (ids: Float64Array): Map<number, number> => {
  const m = new Map<number, number>();
  ids.forEach((id, i) => m.set(id, i));
  return m;
};

/** A short hash of a small text (the head and tail around the summaries: the pagination). */
const hashText = (text: string): string => {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(36);
};
