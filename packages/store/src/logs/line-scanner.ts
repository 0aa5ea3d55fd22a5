import type { FileHandle } from 'node:fs/promises';

/** Counters a caller may pass to see how much a read cost (tests assert on them). */
export interface LogReadStats {
  /** Bytes read from the file. */
  bytesRead: number;
  /** `read` calls made. */
  reads: number;
}

export const NEWLINE = 0x0a;

/** Newlines in a buffer. */
export const countNewlines = (b: Buffer): number => {
  let n = 0;
  for (let i = b.indexOf(NEWLINE); i !== -1; i = b.indexOf(NEWLINE, i + 1)) n++;
  return n;
};

/**
 * Positional reads through one reusable buffer: memory stays at one chunk (`chunkBytes`, grown
 * up to `maxChunkBytes` for long forward skips).
 */
export class ChunkReader {
  #buf: Buffer;

  constructor(
    readonly fh: FileHandle,
    readonly size: number,
    readonly chunkBytes: number,
    readonly maxChunkBytes: number,
    readonly stats: LogReadStats | undefined,
  ) {
    this.#buf = Buffer.allocUnsafe(chunkBytes);
  }

  /**
   * Up to `want` bytes (@default one chunk) from `pos`, not past `end`. The buffer is reused by
   * the next call.
   */
  async read(pos: number, end = this.size, want = this.chunkBytes): Promise<Buffer> {
    const len = Math.min(want, this.maxChunkBytes, end - pos);
    if (len <= 0) return this.#buf.subarray(0, 0);
    if (len > this.#buf.length) this.#buf = Buffer.allocUnsafe(len);
    const { bytesRead } = await this.fh.read(this.#buf, 0, len, pos);
    if (this.stats) {
      this.stats.bytesRead += bytesRead;
      this.stats.reads++;
    }
    return this.#buf.subarray(0, bytesRead);
  }

  /** Newlines in [from, to). */
  async countNewlines(from: number, to: number): Promise<number> {
    let n = 0;
    for (let pos = from; pos < to;) {
      const chunk = await this.read(pos, to);
      if (chunk.length === 0) break;
      n += countNewlines(chunk);
      pos += chunk.length;
    }
    return n;
  }
}

/** One line being collected, kept to `max` bytes. */
export class LineBuilder {
  #parts: Buffer[] = [];
  #kept = 0;
  /** Bytes of the line so far, including the ones cut off. */
  length = 0;

  constructor(readonly max: number) {}

  add(bytes: Buffer): void {
    this.length += bytes.length;
    const room = this.max - this.#kept;
    if (room <= 0 || bytes.length === 0) return;
    const part = Buffer.from(bytes.subarray(0, room)); // copy: the reader reuses its buffer
    this.#parts.push(part);
    this.#kept += part.length;
  }

  finish(): string {
    let text = Buffer.concat(this.#parts, this.#kept).toString('utf8');
    const cut = this.length - this.#kept;
    if (cut === 0 && text.endsWith('\r')) text = text.slice(0, -1); // CRLF
    if (cut > 0) text += `… [${cut} more bytes]`;
    this.#parts = [];
    this.#kept = 0;
    this.length = 0;
    return text;
  }
}

/** What `scanForward` found. */
export interface ForwardScan {
  readonly lines: string[];
  /** Lines skipped before the first returned one. */
  readonly skipped: number;
  /** Byte just after the last returned line (after its newline), or the file size at EOF. */
  readonly stopByte: number;
  /** End of the bytes read (the sample for an estimate starts at the scan's start). */
  readonly readEnd: number;
  /** Newlines in the bytes read. */
  readonly newlines: number;
  /** Byte just after the last newline read: [startByte, this) holds `newlines` whole lines. */
  readonly lastLineEnd: number;
}

/**
 * Reads forward from `startByte` (a line start): skips `skip` lines, then collects up to `take`
 * lines. A final line without newline counts as a line.
 */
export const scanForward = async (
  r: ChunkReader,
  startByte: number,
  skip: number,
  take: number,
  maxLineBytes: number,
): Promise<ForwardScan> => {
  const lines: string[] = [];
  const line = new LineBuilder(maxLineBytes);
  let skipped = 0;
  let newlines = 0;
  let lastLineEnd = startByte;
  let pos = startByte;
  let want = r.chunkBytes;
  while (pos < r.size) {
    const chunk = await r.read(pos, r.size, want);
    if (chunk.length === 0) break;
    const chunkNewlines = countNewlines(chunk);
    newlines += chunkNewlines;
    const lastNl = chunk.lastIndexOf(NEWLINE);
    if (lastNl !== -1) lastLineEnd = pos + lastNl + 1;
    if (skip - skipped > chunkNewlines) {
      // Every line ending in this chunk is skipped: no need to find them one by one.
      skipped += chunkNewlines;
      pos += chunk.length;
      want = Math.min(want * 2, r.maxChunkBytes); // far from the offset: read in bigger steps
      continue;
    }
    let i = 0;
    while (i < chunk.length) {
      const nl = chunk.indexOf(NEWLINE, i);
      if (skipped < skip) {
        if (nl === -1) break;
        skipped++;
        i = nl + 1;
        continue;
      }
      line.add(chunk.subarray(i, nl === -1 ? chunk.length : nl));
      if (nl === -1) break;
      lines.push(line.finish());
      i = nl + 1;
      if (lines.length === take)
        return {
          lines,
          skipped,
          stopByte: pos + i,
          readEnd: pos + chunk.length,
          newlines,
          lastLineEnd,
        };
    }
    pos += chunk.length;
  }
  if (skipped === skip && line.length > 0) lines.push(line.finish()); // last line, no newline
  return { lines, skipped, stopByte: r.size, readEnd: pos, newlines, lastLineEnd };
};
