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
  /** The summaries listed, in order (the objects the store handed over). */
  readonly runs: readonly RunSummaryRecord[];
  /** The byte offset in `body` of each summary's text. */
  readonly offsets: Uint32Array;
}

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
  let at = out.write(head, 0);
  out[at++] = 0x5b; // [
  at = writeSummaries(out, at, { runs, parts, offsets }, previous);
  out[at++] = 0x5d; // ]
  out.write(tail, at);
  const tag = `${(h1 >>> 0).toString(36)}${(h2 >>> 0).toString(36)}`;
  return {
    body: out,
    etag: `W/"${BOOT}-${size.toString(36)}-${parts.length}-${tag}-${hashText(head + tail)}"`,
    head,
    tail,
    runs,
    offsets,
  };
};

/** The listing being written: its summaries, their fragments, and where each text goes. */
interface Writing {
  readonly runs: readonly RunSummaryRecord[];
  readonly parts: readonly Fragment[];
  readonly offsets: Uint32Array;
}

/**
 * Writes `s1,s2,...` into `out` from `at` (recording each text's offset); returns the end. A
 * stretch of summaries that `previous` lists consecutively is one copy of its bytes.
 */
const writeSummaries = (
  out: Buffer,
  at: number,
  { runs, parts, offsets }: Writing,
  previous: BuiltListing | undefined,
): number => {
  const was = previous === undefined ? undefined : positions(previous.runs);
  let i = 0;
  while (i < runs.length) {
    if (i > 0) out[at++] = 0x2c; // ,
    const j = was?.get(runs[i] as RunSummaryRecord);
    if (previous === undefined || j === undefined) {
      offsets[i] = at;
      at += out.write((parts[i] as Fragment).text, at);
      i++;
      continue;
    }
    let k = 1;
    while (i + k < runs.length && previous.runs[j + k] === runs[i + k]) k++;
    const from = previous.offsets[j] as number;
    const to = (previous.offsets[j + k - 1] as number) + (parts[i + k - 1] as Fragment).bytes;
    for (let m = 0; m < k; m++) offsets[i + m] = at + (previous.offsets[j + m] as number) - from;
    at += previous.body.copy(out, at, from, to);
    i += k;
  }
  return at;
};

/** Each summary's place in a listing. */
const positions = (runs: readonly RunSummaryRecord[]): Map<RunSummaryRecord, number> => {
  const m = new Map<RunSummaryRecord, number>();
  runs.forEach((r, i) => m.set(r, i));
  return m;
};

/** A short hash of a small text (the head and tail around the summaries: the pagination). */
const hashText = (text: string): string => {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(36);
};
