import { appendFileSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AppError } from '@trellis/core';
import type { LogChunk, LogQuery } from './log-window.js';
import { readLogChunk, type LogReadStats } from './read-log-chunk.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-log-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const file = (text: string): string => {
  const p = join(dir, `f${Math.random().toString(16).slice(2)}.log`);
  writeFileSync(p, text);
  return p;
};
/** `n` lines `line 1` .. `line n`, each ended by a newline. */
const numbered = (n: number, from = 1): string =>
  Array.from({ length: n }, (_, i) => `line ${from + i}\n`).join('');
const range = (a: number, b: number): string =>
  Array.from({ length: b - a + 1 }, (_, i) => `line ${a + i}`).join('\n');

/** The peer's rules and docs/decisions.md, on the whole text at once. */
const reference = (text: string, q: LogQuery): LogChunk => {
  if (text === '')
    return { content: '', lineCount: 0, totalLines: 0, hasMore: false, isEstimate: false };
  const lines = (text.endsWith('\n') ? text.slice(0, -1) : text)
    .split('\n')
    .map((l) => l.replace(/\r$/, ''));
  const total = lines.length;
  const chunk = (picked: string[], hasMore: boolean): LogChunk => ({
    content: picked.join('\n'),
    lineCount: picked.length,
    totalLines: total,
    hasMore,
    isEstimate: false,
  });
  const limit = q.limit || 1000;
  if (q.tail) return chunk(lines.slice(Math.max(0, total - q.tail)), q.tail < total);
  if (q.head) return chunk(lines.slice(0, q.head), q.head < total);
  if (q.offset) {
    if (q.offset > total) return chunk([], false);
    const picked = lines.slice(q.offset - 1, q.offset - 1 + limit);
    return chunk(picked, q.offset + picked.length - 1 < total);
  }
  return chunk(lines.slice(0, limit), limit < total);
};

describe('readLogChunk on a 25-line file (as the peer does)', () => {
  const text = numbered(25);

  it.each<[string, LogQuery, string, boolean]>([
    ['tail=3 wins over head=2', { tail: 3, head: 2 }, range(23, 25), true],
    ['head=2 wins over offset=10', { head: 2, offset: 10 }, range(1, 2), true],
    ['tail wins over offset and limit', { tail: 2, offset: 3, limit: 4 }, range(24, 25), true],
    ['tail of at least the total returns the whole file', { tail: 25 }, range(1, 25), false],
    ['tail over the total returns the whole file', { tail: 100 }, range(1, 25), false],
    ['head of the total returns everything', { head: 25 }, range(1, 25), false],
    ['offset with limit', { offset: 10, limit: 5 }, range(10, 14), true],
    ['offset reaching the last line', { offset: 20, limit: 6 }, range(20, 25), false],
    ['offset with the default limit', { offset: 10 }, range(10, 25), false],
    ['offset at the last line', { offset: 25 }, 'line 25', false],
    ['offset past the end', { offset: 30 }, '', false],
    ['offset just past the end', { offset: 26, limit: 3 }, '', false],
    ['limit alone reads from line 1', { limit: 4 }, range(1, 4), true],
    ['nothing set reads lines 1..1000', {}, range(1, 25), false],
    ['zeros count as not set', { tail: 0, head: 0, offset: 0, limit: 0 }, range(1, 25), false],
  ])('%s', async (_name, query, content, hasMore) => {
    const got = await readLogChunk(file(text), query);
    expect(got).toEqual({
      content,
      lineCount: content === '' ? 0 : content.split('\n').length,
      totalLines: 25,
      hasMore,
      isEstimate: false,
    });
  });
});

describe('readLogChunk', () => {
  it('returns 1000 lines by default from a longer file, with more to come', async () => {
    const got = await readLogChunk(file(numbered(1500)), {});
    expect(got).toMatchObject({
      lineCount: 1000,
      totalLines: 1500,
      hasMore: true,
      isEstimate: false,
    });
    expect(got.content.split('\n').at(-1)).toBe('line 1000');
  });

  it('returns an empty chunk for an empty file', async () => {
    expect(await readLogChunk(file(''), { tail: 5 })).toEqual({
      content: '',
      lineCount: 0,
      totalLines: 0,
      hasMore: false,
      isEstimate: false,
    });
  });

  it('counts a final line without newline as a line', async () => {
    const p = file('a\nb\nc');
    expect(await readLogChunk(p, { tail: 1 })).toMatchObject({
      content: 'c',
      totalLines: 3,
      hasMore: true,
    });
    expect(await readLogChunk(p, { head: 3 })).toMatchObject({
      content: 'a\nb\nc',
      hasMore: false,
    });
    expect(await readLogChunk(p, { offset: 3 })).toMatchObject({ content: 'c', lineCount: 1 });
  });

  it('keeps empty lines and drops the carriage return of CRLF line ends', async () => {
    const p = file('a\r\n\r\nb\r\n\n');
    expect(await readLogChunk(p, {})).toEqual({
      content: 'a\n\nb\n',
      lineCount: 4,
      totalLines: 4,
      hasMore: false,
      isEstimate: false,
    });
    expect(await readLogChunk(p, { tail: 2 })).toMatchObject({ content: 'b\n', lineCount: 2 });
  });

  it('answers not_found for a missing file', async () => {
    const err = await readLogChunk(join(dir, 'missing.log')).catch((e: unknown) => e);
    expect(AppError.is(err) && err.code).toBe('not_found');
  });

  it('refuses a negative value as bad_request', async () => {
    const err = await readLogChunk(file('a\n'), { head: -1 }).catch((e: unknown) => e);
    expect(AppError.is(err) && err.code).toBe('bad_request');
  });

  it('cuts a line longer than maxLineBytes and says how much was left out', async () => {
    const p = file(`short\n${'x'.repeat(5000)}\nend\n`);
    const got = await readLogChunk(p, { tail: 2 }, { maxLineBytes: 100, chunkBytes: 64 });
    expect(got.content).toBe(`${'x'.repeat(100)}… [4900 more bytes]\nend`);
  });

  it('agrees with the reference rules for every query on awkward files and tiny chunks', async () => {
    const texts = [
      numbered(40),
      numbered(40).slice(0, -1), // no final newline
      'é日本\nñ\r\n\n\nlong line with ünïcödé across chunk boundaries\nz',
      '\n',
      '\n\n\n',
      'only one line',
    ];
    const values = [undefined, 0, 1, 2, 3, 5, 39, 40, 41, 100];
    for (const text of texts) {
      const p = file(text);
      for (const key of ['tail', 'head', 'offset', 'limit'] as const)
        for (const v of values) {
          const q: LogQuery = v === undefined ? {} : { [key]: v };
          for (const chunkBytes of [1, 3, 7, 4096])
            expect([text, q, chunkBytes, await readLogChunk(p, q, { chunkBytes })]).toEqual([
              text,
              q,
              chunkBytes,
              reference(text, q),
            ]);
        }
      for (const q of [
        { offset: 3, limit: 2 },
        { offset: 2, limit: 1 },
        { tail: 2, limit: 1 },
      ])
        expect(await readLogChunk(p, q, { chunkBytes: 3 })).toEqual(reference(text, q));
    }
  });

  it('estimates totalLines of a file over the exact-count size, exactly when the read saw it all', async () => {
    const text = numbered(200, 100_000); // lines of equal length: the estimate is exact
    const p = file(text);
    const small = { exactCountMaxBytes: 1024, chunkBytes: 256 };
    expect(await readLogChunk(p, { head: 5 }, small)).toMatchObject({
      totalLines: 200,
      isEstimate: true,
      hasMore: true,
    });
    expect(await readLogChunk(p, { tail: 5 }, small)).toMatchObject({
      totalLines: 200,
      isEstimate: true,
    });
    expect(await readLogChunk(p, { head: 200 }, small)).toMatchObject({
      totalLines: 200,
      isEstimate: false,
    });
  });
});

describe('readLogChunk on a 1,000,000-line file', () => {
  const LINES = 1_000_000;
  /** `line 0000001 ...`: 30 bytes each, so line k starts at byte (k-1)*30. */
  const lineText = (k: number): string => `line ${String(k).padStart(7, '0')} of the big log`;
  const LINE_BYTES = lineText(1).length + 1;
  const CHUNK = 64 * 1024;
  const MAX_CHUNK = 1024 * 1024;
  let bigDir: string;
  let big: string;

  beforeAll(() => {
    bigDir = mkdtempSync(join(tmpdir(), 'trellis-biglog-'));
    big = join(bigDir, 'big.log');
    writeFileSync(big, '');
    for (let k = 1; k <= LINES; k += 50_000) {
      let s = '';
      for (let j = k; j < k + 50_000; j++) s += `${lineText(j)}\n`;
      appendFileSync(big, s);
    }
  });
  afterAll(() => rmSync(bigDir, { recursive: true, force: true }));

  const read = async (q: LogQuery): Promise<{ got: LogChunk; stats: LogReadStats }> => {
    const stats: LogReadStats = { bytesRead: 0, reads: 0 };
    return { got: await readLogChunk(big, q, { stats }), stats };
  };

  it('has the expected size', () => {
    expect(statSync(big).size).toBe(LINES * LINE_BYTES);
  });

  it('reads the tail from the end, touching a few chunks only', async () => {
    const { got, stats } = await read({ tail: 100 });
    expect(got.content.split('\n')).toEqual(
      Array.from({ length: 100 }, (_, i) => lineText(LINES - 99 + i)),
    );
    expect(got).toMatchObject({ lineCount: 100, hasMore: true, isEstimate: true });
    expect(Math.abs(got.totalLines - LINES)).toBeLessThan(LINES / 100);
    expect(stats.bytesRead).toBeLessThanOrEqual(3 * CHUNK);
  });

  it('reads the head from the start, touching one chunk', async () => {
    const { got, stats } = await read({ head: 10 });
    expect(got.content).toBe(Array.from({ length: 10 }, (_, i) => lineText(i + 1)).join('\n'));
    expect(got).toMatchObject({ hasMore: true, isEstimate: true });
    expect(Math.abs(got.totalLines - LINES)).toBeLessThan(LINES / 100);
    expect(stats.bytesRead).toBeLessThanOrEqual(CHUNK + 1);
  });

  it('reads the maximum tail of 10,000 lines within the bytes of those lines, twice, plus chunks', async () => {
    const { got, stats } = await read({ tail: 10_000 });
    expect(got.lineCount).toBe(10_000);
    expect(got.content.slice(0, lineText(1).length)).toBe(lineText(LINES - 9_999));
    expect(stats.bytesRead).toBeLessThanOrEqual(2 * 10_000 * LINE_BYTES + 3 * CHUNK);
  });

  it('reads an offset in the middle by scanning forward to it and stopping after the limit', async () => {
    const offset = 500_000;
    const { got, stats } = await read({ offset, limit: 100 });
    expect(got.content.split('\n')[0]).toBe(lineText(offset));
    expect(got.content.split('\n').at(-1)).toBe(lineText(offset + 99));
    expect(got).toMatchObject({ lineCount: 100, hasMore: true, isEstimate: true });
    // Never the whole file: up to the last returned line, plus at most one (grown) chunk.
    expect(stats.bytesRead).toBeLessThanOrEqual((offset + 99) * LINE_BYTES + MAX_CHUNK + 1);
    expect(stats.bytesRead).toBeLessThan(statSync(big).size * 0.6);
  });

  it('reads an offset past the end as empty, with an exact count from the full scan', async () => {
    const { got } = await read({ offset: LINES + 1 });
    expect(got).toEqual({
      content: '',
      lineCount: 0,
      totalLines: LINES,
      hasMore: false,
      isEstimate: false,
    });
  });

  it('reads the last line by offset with nothing after it', async () => {
    const { got } = await read({ offset: LINES });
    expect(got).toEqual({
      content: lineText(LINES),
      lineCount: 1,
      totalLines: LINES,
      hasMore: false,
      isEstimate: false,
    });
  });
});
