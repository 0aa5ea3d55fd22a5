import { read, stat as statCb, statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { promisify } from 'node:util';
import { writeFileAtomic } from '../fs/atomic-write.js';
import { fd } from '../fs/fd.js';
import { isMissing } from '../fs/fs-errors.js';
import type { RunSummary } from '../runs/run-summary.js';
import { decodeIndexLine, encodeIndexLine, keyOfSummary, type IndexLine } from './index-line.js';
import type { IndexState } from './index-state.js';

/** What reading an index file needs. */
export interface IndexSource {
  /** Path of the DAG's `index.jsonl`. */
  readonly path: string;
  /** Reads every status file of the DAG (children included); undefined when it has no folder. */
  readonly scan: () => Promise<RunSummary[] | undefined>;
  readonly warn: (message: string) => void;
}

export const statP = promisify(statCb);
const readP = (
  file: number,
  buf: Buffer,
  offset: number,
  length: number,
  position: number,
): Promise<number> =>
  new Promise((resolve, reject) =>
    read(file, buf, offset, length, position, (e, n) => (e ? reject(e) : resolve(n))),
  );

const READ_CHUNK_BYTES = 1 << 20;
const NEWLINE = 0x0a;

/**
 * Brings `state` up to date with the file: reads only the bytes appended since the last read
 * (by this or another process), from the start when the file was replaced, and rebuilds the
 * file from the status files when it is missing or holds an unreadable line.
 */
export const syncIndex = async (state: IndexState, src: IndexSource): Promise<void> => {
  let file: number;
  try {
    // Synchronous: every listing starts here, and a stat of the file the last listing read
    // costs microseconds, a sixth of a thread pool round trip (docs/decisions.md).
    const st = statSync(src.path);
    if (state.loaded && st.ino === state.ino && st.size === state.offset) return;
    file = await fd.open(src.path, 'r');
  } catch (e) {
    if (!isMissing(e)) throw e;
    await rebuildIndex(state, src, undefined);
    return;
  }
  let badLine: string | undefined;
  try {
    // fstat, not the path's stat: the file may have been replaced between the two.
    const st = await fd.stat(file);
    if (!state.loaded || st.ino !== state.ino || st.size < state.offset) {
      state.reset();
      state.ino = st.ino;
    }
    if (st.size > state.offset) badLine = await readFrom(state, file, st.size);
    state.loaded = true;
  } finally {
    await fd.close(file);
  }
  if (badLine !== undefined)
    await rebuildIndex(state, src, `unreadable line ${JSON.stringify(badLine)}`);
};

/** Applies the complete lines in [offset, size); returns the first unreadable line, if any. */
const readFrom = async (
  state: IndexState,
  file: number,
  size: number,
): Promise<string | undefined> => {
  const buf = Buffer.allocUnsafe(Math.min(READ_CHUNK_BYTES, size - state.offset));
  let carry = Buffer.alloc(0);
  let pos = state.offset;
  while (pos < size) {
    const bytesRead = await readP(file, buf, 0, Math.min(buf.length, size - pos), pos);
    if (bytesRead === 0) break;
    pos += bytesRead;
    const data =
      carry.length === 0
        ? buf.subarray(0, bytesRead)
        : Buffer.concat([carry, buf.subarray(0, bytesRead)]);
    const last = data.lastIndexOf(NEWLINE);
    if (last === -1) {
      carry = Buffer.from(data);
      continue;
    }
    for (const text of data.toString('utf8', 0, last).split('\n')) {
      state.lines++;
      const line = decodeIndexLine(text);
      if (line === undefined) {
        if (text.trim() === '') continue;
        return text.slice(0, 80);
      }
      state.apply(line);
    }
    state.offset += last + 1; // `data` starts at the old offset (the carried fragment first)
    carry = Buffer.from(data.subarray(last + 1));
  }
  return undefined;
};

/** Rewrites the file from the status files (`reason`, when given, is reported). */
const rebuildIndex = async (
  state: IndexState,
  src: IndexSource,
  reason: string | undefined,
): Promise<void> => {
  const summaries = await src.scan();
  state.reset();
  state.loaded = true;
  if (summaries === undefined) return; // no folder for this DAG: nothing to index yet
  const lines = summaries.map((summary): IndexLine => ({
    kind: 'put',
    key: keyOfSummary(summary),
    summary,
  }));
  lines.forEach((l) => state.apply(l));
  const text = lines.map(encodeIndexLine).join('');
  await writeFileAtomic(src.path, text);
  state.ino = (await stat(src.path)).ino;
  state.offset = Buffer.byteLength(text);
  state.lines = lines.length;
  if (reason !== undefined)
    src.warn(`run index ${src.path} was rebuilt from ${summaries.length} status files: ${reason}`);
};

/** The complete lines of a file from `offset` on (a trailing fragment without newline is left). */
export const readCompleteLines = async (fh: FileHandle, offset: number): Promise<string> => {
  const { size } = await fh.stat();
  if (size <= offset) return '';
  const buf = Buffer.alloc(size - offset);
  const { bytesRead } = await fh.read(buf, 0, buf.length, offset);
  const last = buf.subarray(0, bytesRead).lastIndexOf(NEWLINE);
  return last === -1 ? '' : buf.toString('utf8', 0, last + 1);
};
