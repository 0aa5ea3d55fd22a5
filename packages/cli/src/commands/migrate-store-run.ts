import type { Clock } from '@trellis/core';
import { ExitCode, type CliIo } from '../io.js';

/** Where `trellis migrate store` copies to. */
export type MoveTarget = 'postgres' | 'files';

export interface MoveStoreOptions {
  readonly target: MoveTarget;
  readonly url: string;
  /** The file home's folders: read with --to postgres, written with --to files. */
  readonly dataDir: string;
  readonly logDir: string;
  readonly clock: Clock;
}

/** Runs between progress lines. */
const PROGRESS_EVERY = 1000;
/** Failed runs listed one per line; the rest are counted. */
const SHOWN = 10;

/** The copy itself, with the store packages loaded only now (not by `trellis --help`). */
export const moveStore = async (io: CliIo, o: MoveStoreOptions): Promise<ExitCode> => {
  const { PgDb, migrate, copyFilesToPg, exportPgToFiles, reportLines } =
    await import('@trellis/store-pg');
  const { FsRunStore } = await import('@trellis/store');
  const db = new PgDb({ url: o.url, poolSize: 5 });
  const started = Date.now();
  let seen = 0;
  const onProgress = (): void => {
    if (++seen % PROGRESS_EVERY === 0) io.err(`  ... ${seen} runs`);
  };
  try {
    await migrate(db);
    const files = new FsRunStore({ dataDir: o.dataDir, logDir: o.logDir, clock: o.clock });
    io.out(
      o.target === 'postgres'
        ? `copying the file home (${o.dataDir}, logs ${o.logDir}) into the database`
        : `exporting the database into the file home (${o.dataDir}, logs ${o.logDir})`,
    );
    const report =
      o.target === 'postgres'
        ? await copyFilesToPg({ files, dataDir: o.dataDir, db, clock: o.clock, onProgress })
        : await exportPgToFiles({ db, files, logDir: o.logDir, onProgress });
    for (const line of reportLines(report)) io.out(line);
    io.out(
      o.target === 'postgres'
        ? 'history index: the runs rows (indexed by DAG and time), nothing more to copy'
        : 'history index: written by the file store with each run',
    );
    io.out(`took ${((Date.now() - started) / 1000).toFixed(1)} s`);
    for (const f of report.failed.slice(0, SHOWN)) io.err(`  failed: ${f.run}: ${f.reason}`);
    if (report.failed.length > SHOWN) io.err(`  ... and ${report.failed.length - SHOWN} more`);
    return report.failed.length > 0 ? ExitCode.Failure : ExitCode.Ok;
  } finally {
    await db.end();
  }
};
