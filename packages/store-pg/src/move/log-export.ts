import { createWriteStream } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { once } from 'node:events';
import type { PgDb } from '../db/pg-db.js';

/** Lines fetched per query when a log is written out. */
const PAGE_LINES = 5000;

/** A log of the database, as listed for one run folder. */
export interface StoredLog {
  readonly id: string;
  readonly path: string;
  readonly partial: string;
  readonly truncatedReason: string | null;
}

/** The logs the database holds in the folder `dir` (one run's logs). */
export const logsInDir = async (db: PgDb, dir: string): Promise<StoredLog[]> => {
  const r = await db.query<{
    id: string;
    path: string;
    partial: string;
    truncated_reason: string | null;
  }>('SELECT id, path, partial, truncated_reason FROM trellis_logs WHERE dir = $1 ORDER BY path', [
    dir,
  ]);
  return r.rows.map((x) => ({
    id: x.id,
    path: x.path,
    partial: x.partial,
    truncatedReason: x.truncated_reason,
  }));
};

/**
 * Writes a stored log to the file `to`, a page of lines at a time (bounded memory), under a
 * temporary name renamed into place: a cut export never leaves half a log under the real name.
 * A log marked incomplete gets the file store's marker beside it (`.<file>.truncated`, see
 * packages/store/src/logs/truncation-marker.ts). Resolves with the lines written.
 */
export const exportLog = async (db: PgDb, log: StoredLog, to: string): Promise<number> => {
  await mkdir(dirname(to), { recursive: true });
  const tmp = join(dirname(to), `.${basename(to)}.export-${process.pid}`);
  const out = createWriteStream(tmp);
  let last = 0;
  let lines = 0;
  for (;;) {
    const page = await db.query<{ line_no: string; content: string }>(
      `SELECT line_no, content FROM trellis_log_lines WHERE log_id = $1 AND line_no > $2
       ORDER BY line_no LIMIT ${PAGE_LINES}`,
      [log.id, last],
    );
    if (page.rows.length === 0) break;
    const text = page.rows.map((x) => `${x.content}\n`).join('');
    if (!out.write(text)) await once(out, 'drain');
    last = Number((page.rows[page.rows.length - 1] as { line_no: string }).line_no);
    lines += page.rows.length;
    if (page.rows.length < PAGE_LINES) break; // the last page: no query for an empty one
  }
  out.end(log.partial);
  await once(out, 'finish');
  await rename(tmp, to);
  if (log.truncatedReason !== null)
    await writeFile(join(dirname(to), `.${basename(to)}.truncated`), log.truncatedReason);
  return lines + (log.partial === '' ? 0 : 1);
};
