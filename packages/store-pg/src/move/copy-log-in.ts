import { stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { PgDb } from '../db/pg-db.js';
import { readFileLines } from './file-lines.js';

/** Lines per insert: a few hundred kB per statement. */
const BATCH_LINES = 5000;

/**
 * Copies the log file at `path` into the database under the same path (its key), replacing what
 * the database had for it, in one transaction: a copy cut midway leaves the old log (or none),
 * never half of one. `truncatedReason` carries the file store's "incomplete" marker over.
 * Resolves with the number of lines written.
 */
export const copyLogIn = async (
  db: PgDb,
  path: string,
  truncatedReason: string | undefined,
): Promise<number> =>
  db.tx(async (q) => {
    await q.query('DELETE FROM trellis_logs WHERE path = $1', [path]);
    const row = await q.query<{ id: string }>(
      'INSERT INTO trellis_logs (path, dir, truncated_reason) VALUES ($1, $2, $3) RETURNING id',
      [path, dirname(path), truncatedReason ?? null],
    );
    const id = (row.rows[0] as { id: string }).id;
    let written = 0;
    const end = await readFileLines(path, BATCH_LINES, async (lines) => {
      await q.query(
        `INSERT INTO trellis_log_lines (log_id, line_no, content)
         SELECT $1, $2 + n, c FROM unnest($3::text[]) WITH ORDINALITY AS t(c, n)`,
        [id, written, lines],
      );
      written += lines.length;
    });
    // bytes: the file's, the offsets a worker's log chunks for it count in
    const bytes = await stat(path).then(
      (s) => s.size,
      () => 0,
    );
    await q.query(
      'UPDATE trellis_logs SET total_lines = $2, partial = $3, bytes = $4 WHERE id = $1',
      [id, end.complete, end.partial, bytes],
    );
    return end.complete;
  });
