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

/**
 * `${head}[s1,s2,...]${tail}` as UTF-8 bytes, each `s` the JSON of `toApiRunSummary(run)`: the
 * bytes `JSON.stringify` of the same object would give, written straight into one buffer (no
 * joined string of a whole history to make and then encode).
 */
export const runSummariesJsonBody = (
  head: string,
  runs: readonly RunSummaryRecord[],
  tail: string,
): ListingBody => {
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
  let at = out.write(head, 0);
  out[at++] = 0x5b; // [
  for (let i = 0; i < parts.length; i++) {
    if (i > 0) out[at++] = 0x2c; // ,
    at += out.write((parts[i] as Fragment).text, at);
  }
  out[at++] = 0x5d; // ]
  out.write(tail, at);
  const tag = `${(h1 >>> 0).toString(36)}${(h2 >>> 0).toString(36)}`;
  return {
    body: out,
    etag: `W/"${BOOT}-${size.toString(36)}-${parts.length}-${tag}-${hashText(head + tail)}"`,
  };
};

/** A short hash of a small text (the head and tail around the summaries: the pagination). */
const hashText = (text: string): string => {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(36);
};
