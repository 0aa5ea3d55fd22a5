import type { RunSummaryRecord } from '@trellis/services';
import { toApiRunSummary } from './run.mapper.js';

/** A summary's JSON text and its length in UTF-8 bytes. */
interface Fragment {
  readonly text: string;
  readonly bytes: number;
}

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
    f = { text, bytes: Buffer.byteLength(text) };
    fragments.set(r, f);
  }
  return f;
};

/**
 * `${head}[s1,s2,...]${tail}` as UTF-8 bytes, each `s` the JSON of `toApiRunSummary(run)`: the
 * bytes `JSON.stringify` of the same object would give, written straight into one buffer (no
 * joined string of a whole history to make and then encode).
 */
export const runSummariesJsonBody = (
  head: string,
  runs: readonly RunSummaryRecord[],
  tail: string,
): Buffer => {
  const parts = runs.map(fragmentOf);
  let size = Buffer.byteLength(head) + Buffer.byteLength(tail) + 2 + Math.max(0, runs.length - 1);
  for (const p of parts) size += p.bytes;
  const out = Buffer.allocUnsafe(size);
  let at = out.write(head, 0);
  out[at++] = 0x5b; // [
  for (let i = 0; i < parts.length; i++) {
    if (i > 0) out[at++] = 0x2c; // ,
    at += out.write((parts[i] as Fragment).text, at);
  }
  out[at++] = 0x5d; // ]
  out.write(tail, at);
  return out;
};
