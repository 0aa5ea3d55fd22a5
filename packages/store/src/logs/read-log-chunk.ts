import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { AppError, ErrorCode } from '@trellis/core';
import { isMissing } from '../fs/fs-errors.js';
import {
  ChunkReader,
  NEWLINE,
  countNewlines,
  scanForward,
  type LogReadStats,
} from './line-scanner.js';
import { resolveLogWindow, type LogChunk, type LogQuery } from './log-window.js';

export type { LogReadStats } from './line-scanner.js';

/** Tuning of `readLogChunk`; the defaults suit the API. */
export interface ReadLogOptions {
  /** Bytes per read call near the lines returned. @default 65536 */
  readonly chunkBytes?: number;
  /**
   * Largest read: skipping to a far `offset` (and counting lines for an exact total) reads in
   * steps growing up to this size, which is also the most read beyond the last returned line.
   * @default 1048576
   */
  readonly maxChunkBytes?: number;
  /** Files up to this size get an exact `totalLines` (every newline counted). @default 1048576 */
  readonly exactCountMaxBytes?: number;
  /** Longer lines are cut, ending with `… [N more bytes]`, to bound memory. @default 65536 */
  readonly maxLineBytes?: number;
  /** Largest `tail`, `head` or `limit` accepted. @default 10000 */
  readonly maxLines?: number;
  /** Incremented with the bytes and reads this call made. */
  readonly stats?: LogReadStats;
}

interface Total {
  readonly totalLines: number;
  readonly isEstimate: boolean;
}

/** What a read saw: bytes [from, to) with `newlines` in them, and a sample of whole lines. */
interface Seen {
  readonly from: number;
  readonly to: number;
  readonly newlines: number;
  readonly sampleBytes: number;
  readonly sampleLines: number;
}

/**
 * `totalLines` from what a read saw: exact when it read the whole file or the file is small
 * enough to count the rest; otherwise the file size over the sample's average line length
 * (whole lines only, so a chunk cut mid-line does not skew it), never below `atLeast` (the lines
 * known to exist).
 */
const totalFrom = async (
  r: ChunkReader,
  lastIsNewline: boolean,
  seen: Seen,
  atLeast: number,
  exactMax: number,
): Promise<Total> => {
  const lines = (newlines: number): number => newlines + (lastIsNewline ? 0 : 1);
  if (seen.from === 0 && seen.to >= r.size)
    return { totalLines: lines(seen.newlines), isEstimate: false };
  if (r.size <= exactMax) {
    const before = await r.countNewlines(0, seen.from);
    const after = await r.countNewlines(seen.to, r.size);
    return { totalLines: lines(before + seen.newlines + after), isEstimate: false };
  }
  const estimate =
    seen.sampleLines > 0 && seen.sampleBytes > 0
      ? Math.round(r.size / (seen.sampleBytes / seen.sampleLines))
      : 0;
  return { totalLines: Math.max(atLeast, estimate), isEstimate: true };
};

const join = (lines: readonly string[]): string => lines.join('\n');

/** An open, non-empty log file and the settings every read of it uses. */
interface LogFile {
  readonly r: ChunkReader;
  readonly size: number;
  /** Whether the file ends with a newline (which ends the last line and starts none). */
  readonly lastIsNewline: boolean;
  readonly maxLineBytes: number;
  readonly exactMax: number;
}

/** Where a backwards search for the start of the last lines stopped, and what it saw. */
interface TailSearch {
  /** Byte where the first returned line starts (0 = the file's first line). */
  readonly start: number;
  /** Lowest byte read. */
  readonly pos: number;
  /** Newlines in the bytes read. */
  readonly sampleNewlines: number;
  /** Byte of the lowest newline read, or -1. */
  readonly lowestNl: number;
}

/**
 * Reads part of a log file as a spec "Log chunk" without loading the file: `head`, `offset` and
 * `limit` read forward from the start and stop after the last returned line; `tail` reads
 * backwards from the end in chunks to find where the last N lines start, then forward from
 * there. Memory stays at one chunk plus the returned lines. `totalLines` is exact for files up
 * to 1 MiB (or when the read covered the whole file), else estimated from the bytes read, with
 * `isEstimate: true`. `hasMore` is always exact. A final line without newline counts; CRLF line
 * ends are tolerated. Precedence and defaults: `resolveLogWindow`.
 *
 * Errors: `not_found` when the file does not exist; `bad_request` for invalid query values.
 */
export const readLogChunk = async (
  path: string,
  query: LogQuery = {},
  options: ReadLogOptions = {},
): Promise<LogChunk> => {
  const window = resolveLogWindow(query, options.maxLines);
  const chunkBytes = options.chunkBytes ?? 64 * 1024;
  const fh = await openLog(path);
  try {
    const { size } = await fh.stat();
    if (size === 0)
      return { content: '', lineCount: 0, totalLines: 0, hasMore: false, isEstimate: false };
    const maxChunkBytes = Math.max(chunkBytes, options.maxChunkBytes ?? 1024 * 1024);
    const r = new ChunkReader(fh, size, chunkBytes, maxChunkBytes, options.stats);
    const file: LogFile = {
      r,
      size,
      lastIsNewline: (await r.read(size - 1))[0] === NEWLINE,
      maxLineBytes: options.maxLineBytes ?? 64 * 1024,
      exactMax: options.exactCountMaxBytes ?? 1024 * 1024,
    };
    return window.kind === 'range'
      ? await readRange(file, window.first, window.count)
      : await readTail(file, window.count, chunkBytes);
  } finally {
    await fh.close();
  }
};

/** Opens the log for reading; `not_found` when it does not exist. */
const openLog = async (path: string): Promise<FileHandle> => {
  try {
    return await open(path, 'r');
  } catch (e) {
    if (isMissing(e))
      throw new AppError(ErrorCode.NotFound, `log file not found: ${path}`, { kind: 'log', path });
    throw e;
  }
};

/** `count` lines from line `first` (1-based), read forward from the start. */
const readRange = async (file: LogFile, first: number, count: number): Promise<LogChunk> => {
  const { r, size, lastIsNewline, maxLineBytes, exactMax } = file;
  const scan = await scanForward(r, 0, first - 1, count, maxLineBytes);
  const hasMore = scan.lines.length > 0 && scan.stopByte < size;
  const known = scan.skipped + scan.lines.length + (hasMore ? 1 : 0);
  const total = await totalFrom(
    r,
    lastIsNewline,
    {
      from: 0,
      to: scan.readEnd,
      newlines: scan.newlines,
      sampleBytes: scan.lastLineEnd,
      sampleLines: scan.newlines,
    },
    known,
    exactMax,
  );
  return { content: join(scan.lines), lineCount: scan.lines.length, hasMore, ...total };
};

/** The last `count` lines: found walking back from the end, then read forward. */
const readTail = async (file: LogFile, count: number, chunkBytes: number): Promise<LogChunk> => {
  const { r, size, lastIsNewline, maxLineBytes, exactMax } = file;
  // The final newline ends the last line, it starts none.
  const searchEnd = lastIsNewline ? size - 1 : size;
  const { start, pos, sampleNewlines, lowestNl } = await findTailStart(
    r,
    searchEnd,
    count,
    chunkBytes,
  );
  const scan = await scanForward(r, start, 0, count, maxLineBytes);
  const hasMore = start > 0;
  const total = await totalFrom(
    r,
    lastIsNewline,
    {
      from: pos,
      to: size,
      newlines: sampleNewlines + (lastIsNewline ? 1 : 0),
      // The whole lines after the lowest newline read: the other (sampleNewlines - 1) newlines
      // end one line each, and the last line adds one (ended by the final newline or not).
      sampleBytes: lowestNl === -1 ? 0 : size - lowestNl - 1,
      sampleLines: lowestNl === -1 ? 0 : sampleNewlines,
    },
    scan.lines.length + (hasMore ? 1 : 0),
    exactMax,
  );
  return { content: join(scan.lines), lineCount: scan.lines.length, hasMore, ...total };
};

/** Reads back from `searchEnd` in chunks until `count` newlines are found (or the start). */
const findTailStart = async (
  r: ChunkReader,
  searchEnd: number,
  count: number,
  chunkBytes: number,
): Promise<TailSearch> => {
  let found = 0;
  let pos = searchEnd;
  let sampleNewlines = 0;
  let lowestNl = -1;
  while (pos > 0) {
    const len = Math.min(chunkBytes, pos);
    pos -= len;
    const chunk = await r.read(pos, pos + len);
    sampleNewlines += countNewlines(chunk);
    const firstNl = chunk.indexOf(NEWLINE);
    if (firstNl !== -1) lowestNl = pos + firstNl;
    for (let k = chunk.length - 1; k >= 0;) {
      const nl = chunk.lastIndexOf(NEWLINE, k);
      if (nl === -1) break;
      if (++found === count) return { start: pos + nl + 1, pos, sampleNewlines, lowestNl };
      k = nl - 1;
    }
  }
  return { start: 0, pos, sampleNewlines, lowestNl };
};
