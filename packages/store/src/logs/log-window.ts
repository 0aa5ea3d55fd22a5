import { badRequest } from '@trellis/core';

/** Query of a log read (spec: the `/log` endpoints). 0 or absent = not set. */
export interface LogQuery {
  /** The last N lines. Wins over everything else. */
  readonly tail?: number;
  /** The first N lines. Wins over `offset` and `limit`. */
  readonly head?: number;
  /** First line to return, 1-based; with `limit` lines from there. */
  readonly offset?: number;
  /** Lines to return with `offset`, or from line 1 alone. @default 1000 */
  readonly limit?: number;
}

/** A log chunk (spec: "Log chunk"). */
export interface LogChunk {
  /** The lines, joined by `\n`, without a trailing newline. */
  readonly content: string;
  /** Lines returned. */
  readonly lineCount: number;
  /** Lines in the file: exact, or an estimate when `isEstimate`. */
  readonly totalLines: number;
  /** True when lines follow the returned ones (for `tail`: precede them). */
  readonly hasMore: boolean;
  readonly isEstimate: boolean;
  /**
   * Present (true) when a write to the file failed: its content is incomplete
   * (docs/decisions.md, "Log write failures"). Beside the spec's fields.
   */
  readonly truncated?: true;
  /** Why the log is incomplete (the file and the error, e.g. `ENOSPC`), with `truncated`. */
  readonly truncatedReason?: string;
}

/** Lines returned when no `tail`, `head` or `limit` says otherwise (docs/decisions.md). */
export const DEFAULT_LOG_LIMIT = 1000;
/**
 * Largest `tail`, `head` or `limit` accepted (docs/decisions.md: a `limit` over 10000 is
 * 400). assumption: `tail` and `head` get the same cap, or one request could pull a whole file
 * into memory.
 */
export const MAX_LOG_LINES = 10_000;

/** Which lines a query selects: the last `count`, or `count` lines from line `first` (1-based). */
export type LogWindow =
  | { readonly kind: 'tail'; readonly count: number }
  | { readonly kind: 'range'; readonly first: number; readonly count: number };

const checked = (name: keyof LogQuery, v: number | undefined, max: number): number => {
  if (v === undefined) return 0;
  if (!Number.isSafeInteger(v) || v < 0)
    throw badRequest(`invalid ${name} ${v}: use a whole number of 0 or more`, { parameter: name });
  if (v > max)
    throw badRequest(`invalid ${name} ${v}: at most ${max} lines can be read at once`, {
      parameter: name,
    });
  return v;
};

/**
 * The window a query selects. Precedence `tail` > `head` > `offset` (+`limit`) > `limit` alone;
 * the first one set applies and the rest are ignored (docs/decisions.md,
 * the peer's behaviour). Throws `bad_request` for a negative or fractional value, or a line count
 * over `maxLines` (@default 10000).
 */
export const resolveLogWindow = (q: LogQuery, maxLines = MAX_LOG_LINES): LogWindow => {
  const tail = checked('tail', q.tail, maxLines);
  const head = checked('head', q.head, maxLines);
  const offset = checked('offset', q.offset, Number.MAX_SAFE_INTEGER);
  const limit = checked('limit', q.limit, maxLines) || DEFAULT_LOG_LIMIT;
  if (tail > 0) return { kind: 'tail', count: tail };
  if (head > 0) return { kind: 'range', first: 1, count: head };
  if (offset > 0) return { kind: 'range', first: offset, count: limit };
  return { kind: 'range', first: 1, count: limit };
};
