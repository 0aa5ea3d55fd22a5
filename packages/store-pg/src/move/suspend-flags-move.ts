import { join } from 'node:path';
import { SuspendFlags } from '@trellis/store';
import type { PgDb } from '../db/pg-db.js';
import type { KindCount } from './move-report.js';

/** The file home's suspend flags: empty files `<fileName>.suspend` in `<dataDir>/suspend`. */
const fileFlags = (dataDir: string): SuspendFlags =>
  new SuspendFlags(join(dataDir, 'suspend'), false);

/**
 * Copies the file home's suspend flags into `trellis_dag_suspend_flags`. Adds only: a flag the
 * database has and the home has not is left (another instance may have set it since).
 */
export const copySuspendFlagsIn = async (
  db: PgDb,
  dataDir: string,
  count: KindCount,
): Promise<void> => {
  for (const fileName of fileFlags(dataDir).names()) {
    const r = await db.query(
      `INSERT INTO trellis_dag_suspend_flags (file_name) VALUES ($1)
       ON CONFLICT (file_name) DO NOTHING`,
      [fileName],
    );
    count[r.rowCount === 1 ? 'added' : 'already']++;
  }
};

/** Writes the database's suspend flags into the file home (adds only, as the copy in). */
export const exportSuspendFlags = async (
  db: PgDb,
  dataDir: string,
  count: KindCount,
): Promise<void> => {
  const flags = fileFlags(dataDir);
  const have = flags.names();
  const rows = await db.query<{ file_name: string }>(
    'SELECT file_name FROM trellis_dag_suspend_flags ORDER BY file_name',
  );
  for (const { file_name: fileName } of rows.rows) {
    if (have.has(fileName)) count.already++;
    else {
      await flags.set(fileName, true);
      count.added++;
    }
  }
};
