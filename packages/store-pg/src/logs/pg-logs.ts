import { dirname } from 'node:path';
import { notFound } from '@trellis/core';
import type { LogChunkData, LogWindowQuery } from '@trellis/services';
import { resolveLogWindow } from '@trellis/store';
import type { PgDb, Queryable } from '../db/pg-db.js';

interface LogRow {
  id: string;
  total_lines: string;
  partial: string;
  truncated_reason: string | null;
}

/** Lines of a log with its unfinished last line as one more line (as a file reader sees it). */
interface LogHead {
  readonly id: string;
  readonly complete: number;
  readonly partial: string;
  readonly truncatedReason: string | undefined;
}

const toHead = (r: LogRow): LogHead => ({
  id: r.id,
  complete: Number(r.total_lines),
  partial: r.partial,
  truncatedReason: r.truncated_reason ?? undefined,
});

const totalOf = (h: LogHead): number => h.complete + (h.partial === '' ? 0 : 1);

/**
 * Run and step logs in PostgreSQL: a log is a row keyed by its path (the name the API and
 * workers use), its lines are rows numbered from 1, so every window (head, tail, offset and
 * limit) is one range query on the primary key and no call ever loads a whole log.
 */
export class PgLogs {
  constructor(private readonly db: PgDb) {}

  /**
   * Appends `text` (lines ending in `\n`; an unfinished last line is kept and completed by the
   * next append) to the log at `path`, creating it. One transaction; the log's row is locked so
   * concurrent appends to one log number their lines in turn.
   */
  async append(path: string, text: string): Promise<void> {
    if (text === '') return;
    await this.db.tx(async (q) => {
      const h = await this.#lockOrCreate(q, path);
      const parts = (h.partial + text).split('\n');
      const partial = parts.pop() ?? '';
      if (parts.length > 0)
        await q.query(
          `INSERT INTO trellis_log_lines (log_id, line_no, content)
           SELECT $1, $2 + n, c FROM unnest($3::text[]) WITH ORDINALITY AS t(c, n)`,
          [h.id, h.complete, parts],
        );
      await q.query(
        'UPDATE trellis_logs SET total_lines = $2, partial = $3, bytes = bytes + $4 WHERE id = $1',
        [h.id, h.complete + parts.length, partial, Buffer.byteLength(text)],
      );
    });
  }

  /**
   * Applies `data`, the bytes of the log at `path` from byte `offset` on (a worker's log chunk),
   * skipping the part below the bytes the log holds (sent before, to this or another
   * coordinator), so every byte lands once; returns the log's size in bytes after it. Lines keep
   * the file reader's shape (a CR before the newline dropped). One transaction, the log's row
   * locked. `gap` is told of bytes missing before `offset`.
   */
  async applyAt(
    path: string,
    offset: number,
    data: Buffer,
    gap: (missing: number) => void = () => undefined,
  ): Promise<number> {
    return this.db.tx(async (q) => {
      const h = await this.#lockOrCreate(q, path);
      const r = await q.query<{ bytes: string }>('SELECT bytes FROM trellis_logs WHERE id = $1', [
        h.id,
      ]);
      const size = Number(r.rows[0]?.bytes ?? 0);
      const end = offset + data.length;
      if (end <= size) return size;
      if (offset > size) gap(offset - size);
      const part = offset < size ? data.subarray(size - offset) : data;
      const parts = (h.partial + part.toString('utf8')).split('\n');
      const partial = parts.pop() ?? '';
      if (parts.length > 0)
        await q.query(
          `INSERT INTO trellis_log_lines (log_id, line_no, content)
           SELECT $1, $2 + n, c FROM unnest($3::text[]) WITH ORDINALITY AS t(c, n)`,
          [h.id, h.complete, parts.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l))],
        );
      const bytes = Math.max(size, offset) + part.length;
      await q.query(
        'UPDATE trellis_logs SET total_lines = $2, partial = $3, bytes = $4 WHERE id = $1',
        [h.id, h.complete + parts.length, partial, bytes],
      );
      return bytes;
    });
  }

  /** Bytes the log at `path` holds (0 when there is none). */
  async bytesOf(path: string): Promise<number> {
    const r = await this.db.query<{ bytes: string }>(
      'SELECT bytes FROM trellis_logs WHERE path = $1',
      [path],
    );
    return Number(r.rows[0]?.bytes ?? 0);
  }

  /** Makes an empty log at `path` when there is none (a step that printed nothing). */
  async touch(path: string): Promise<void> {
    await this.db.query(
      'INSERT INTO trellis_logs (path, dir) VALUES ($1, $2) ON CONFLICT (path) DO NOTHING',
      [path, dirname(path)],
    );
  }

  /** Marks the log incomplete (a write failed), with why. */
  async markTruncated(path: string, reason: string): Promise<void> {
    await this.db.query(
      `INSERT INTO trellis_logs (path, dir, truncated_reason) VALUES ($1, $2, $3)
       ON CONFLICT (path) DO UPDATE SET truncated_reason = $3`,
      [path, dirname(path), reason],
    );
  }

  async #lockOrCreate(q: Queryable, path: string): Promise<LogHead> {
    await q.query(
      'INSERT INTO trellis_logs (path, dir) VALUES ($1, $2) ON CONFLICT (path) DO NOTHING',
      [path, dirname(path)],
    );
    const r = await q.query<LogRow>(
      'SELECT id, total_lines, partial, truncated_reason FROM trellis_logs WHERE path = $1 FOR UPDATE',
      [path],
    );
    return toHead(r.rows[0] as LogRow);
  }

  async #head(path: string): Promise<LogHead | undefined> {
    const r = await this.db.query<LogRow>(
      'SELECT id, total_lines, partial, truncated_reason FROM trellis_logs WHERE path = $1',
      [path],
    );
    return r.rows[0] === undefined ? undefined : toHead(r.rows[0]);
  }

  /** Lines `first`..`last` (1-based, inclusive), the unfinished last line included. */
  async #lines(h: LogHead, first: number, last: number): Promise<string[]> {
    const to = Math.min(last, totalOf(h));
    if (to < first) return [];
    const r = await this.db.query<{ content: string }>(
      `SELECT content FROM trellis_log_lines WHERE log_id = $1 AND line_no BETWEEN $2 AND $3
       ORDER BY line_no`,
      [h.id, first, Math.min(to, h.complete)],
    );
    const lines = r.rows.map((x) => x.content);
    if (to > h.complete) lines.push(h.partial);
    return lines;
  }

  /**
   * A window of the log at `path` (spec: Log chunk): `tail` > `head` > `offset`+`limit`, each an
   * indexed range; `totalLines` is exact. Errors: not_found when there is no such log;
   * bad_request for a window the API refuses.
   */
  async read(path: string, query: LogWindowQuery = {}): Promise<LogChunkData> {
    const w = resolveLogWindow(query);
    const h = await this.#head(path);
    if (h === undefined) throw notFound('step', `log ${path}`);
    const total = totalOf(h);
    const first = w.kind === 'tail' ? Math.max(1, total - w.count + 1) : w.first;
    const last = w.kind === 'tail' ? total : w.first + w.count - 1;
    const lines = await this.#lines(h, first, last);
    const chunk: LogChunkData = {
      content: lines.join('\n'),
      lineCount: lines.length,
      totalLines: total,
      hasMore: w.kind === 'tail' ? first > 1 : last < total,
      isEstimate: false,
    };
    return h.truncatedReason === undefined
      ? chunk
      : { ...chunk, truncated: true, truncatedReason: h.truncatedReason };
  }

  /** Complete lines from `from` (1-based) on, at most `max`; the unfinished one when `flush`. */
  async linesFrom(path: string, from: number, max: number, flush: boolean): Promise<string[]> {
    const h = await this.#head(path);
    if (h === undefined) return [];
    const view = flush ? h : { ...h, partial: '' };
    return this.#lines(view, from, from + max - 1);
  }

  /** Deletes every log in the folders `dirs` (a run's logs and its children's). */
  async deleteDirs(q: Queryable, dirs: readonly string[]): Promise<void> {
    if (dirs.length > 0) await q.query('DELETE FROM trellis_logs WHERE dir = ANY($1)', [dirs]);
  }
}
