import { createReadStream } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

/** How a log file ended: its complete lines, and the unfinished last line (no `\n` yet). */
export interface FileLinesEnd {
  readonly complete: number;
  readonly partial: string;
}

/** A line without the `\r` of a CRLF ending, as the file store's reader shows it. */
const unCr = (line: string): string => (line.endsWith('\r') ? line.slice(0, -1) : line);

/**
 * Reads the log file at `path` as lines split on `\n`, a CRLF's `\r` dropped as the file
 * store's reader drops it (packages/store/src/logs/line-scanner.ts), handing them to `onBatch` `batchLines` at a time and waiting for it, so
 * a log of any size is copied in bounded memory. Resolves with the count and the unfinished
 * last line.
 */
export const readFileLines = async (
  path: string,
  batchLines: number,
  onBatch: (lines: string[]) => Promise<void>,
): Promise<FileLinesEnd> => {
  const decoder = new StringDecoder('utf8');
  let carry = '';
  let batch: string[] = [];
  let complete = 0;
  const take = async (text: string): Promise<void> => {
    const parts = (carry + text).split('\n');
    carry = parts.pop() ?? '';
    for (const line of parts) {
      batch.push(unCr(line));
      if (batch.length >= batchLines) {
        complete += batch.length;
        const full = batch;
        batch = [];
        await onBatch(full);
      }
    }
  };
  for await (const chunk of createReadStream(path, { highWaterMark: 256 * 1024 }))
    await take(decoder.write(chunk as Buffer));
  await take(decoder.end());
  if (batch.length > 0) {
    complete += batch.length;
    await onBatch(batch);
  }
  return { complete, partial: unCr(carry) };
};
