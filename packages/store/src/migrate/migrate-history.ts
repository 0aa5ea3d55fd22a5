import { existsSync } from 'node:fs';
import { copyFile, link, mkdir, readFile, rename } from 'node:fs/promises';
import { constants } from 'node:fs';
import { basename, join } from 'node:path';
import { AppError, ErrorCode, RUN_ID_PATTERN, RunStatus, type Clock } from '@trellis/core';
import type { Dag } from '@trellis/spec';
import type { FsRunStore } from '../runs/fs-run-store.js';
import { convertLegacyRun, type LogCopy } from './convert-legacy.js';
import { ARCHIVE_PREFIX, findLegacyFolders, type LegacyFile } from './legacy-layout.js';
import { parseLegacyStatus } from './legacy-status.js';

/** Options of {@link migrateHistory}. */
export interface MigrateHistoryOptions {
  /** The folder holding the 1.16.x DAG folders (the old `dataDir`). */
  readonly legacyDir: string;
  readonly store: FsRunStore;
  /** The current definition of a DAG by name, if the DAGs folder has it. */
  readonly loadDag: (name: string) => Dag | undefined;
  /** Names the archive folder. */
  readonly clock: Clock;
  /** Report what would happen; store and move nothing. @default false */
  readonly dryRun?: boolean;
  /** Files converted at the same time. @default 8 */
  readonly concurrency?: number;
}

/** One file that was not converted, and why. */
export interface MigrationIssue {
  readonly file: string;
  readonly reason: string;
}

/** What a migration did. */
export interface MigrationReport {
  /** Legacy DAG folders found. */
  readonly folders: readonly string[];
  readonly converted: number;
  /** Files with nothing to convert (no run id, never started) or already in the store. */
  readonly skipped: readonly MigrationIssue[];
  /** Files that could not be converted (corrupt, no start time, invalid id). */
  readonly failed: readonly MigrationIssue[];
  /** Where the legacy folders were moved; absent when nothing was moved. */
  readonly archivedTo?: string;
}

type Outcome = { kind: 'converted' } | { kind: 'skipped' | 'failed'; reason: string };

const stamp = (d: Date): string =>
  d.toISOString().replace(/[-:]/g, '').replace('T', '_').slice(0, 15);

/**
 * `trellis migrate history` (spec: history migration from 1.16.x data; as the peer does):
 * converts every legacy `.dat` run into the store through `FsRunStore.createRun`, so an existing
 * run is never overwritten (it is skipped) and a second migration changes nothing. Logs are
 * hard-linked (or copied) into the store's log folder so retention deletes them with the run.
 * The legacy folders are moved into `<legacyDir>/history_migrated_<YYYYMMDD_HHMMSS>/` only when
 * no file failed.
 */
export const migrateHistory = async (opts: MigrateHistoryOptions): Promise<MigrationReport> => {
  const folders = await findLegacyFolders(opts.legacyDir);
  const files = folders.flatMap((f) => f.files);
  const skipped: MigrationIssue[] = [];
  const failed: MigrationIssue[] = [];
  let converted = 0;
  const definitions = new Map<string, Dag | undefined>();
  const definition = (name: string): Dag | undefined => {
    if (!definitions.has(name)) {
      let d: Dag | undefined;
      try {
        d = opts.loadDag(name);
      } catch {
        d = undefined; // an unreadable definition: the run gets a stand-in
      }
      definitions.set(name, d);
    }
    return definitions.get(name);
  };

  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < files.length) {
      const file = files[next++] as LegacyFile;
      const o = await migrateFile(file, opts, definition);
      if (o.kind === 'converted') converted++;
      else (o.kind === 'skipped' ? skipped : failed).push({ file: file.path, reason: o.reason });
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, opts.concurrency ?? 8) }, worker));
  const byFile = (a: MigrationIssue, b: MigrationIssue): number => a.file.localeCompare(b.file);
  skipped.sort(byFile);
  failed.sort(byFile);

  let archivedTo: string | undefined;
  if (!opts.dryRun && failed.length === 0 && folders.length > 0) {
    archivedTo = join(opts.legacyDir, `${ARCHIVE_PREFIX}${stamp(opts.clock.now())}`);
    await mkdir(archivedTo, { recursive: true });
    for (const f of folders) await rename(f.dir, join(archivedTo, basename(f.dir)));
  }
  return {
    folders: folders.map((f) => f.dir),
    converted,
    skipped,
    failed,
    ...(archivedTo !== undefined ? { archivedTo } : {}),
  };
};

const migrateFile = async (
  file: LegacyFile,
  opts: MigrateHistoryOptions,
  definition: (name: string) => Dag | undefined,
): Promise<Outcome> => {
  let text: string;
  try {
    text = await readFile(file.path, 'utf8');
  } catch (e) {
    return { kind: 'failed', reason: `cannot be read: ${(e as Error).message}` };
  }
  const status = parseLegacyStatus(text);
  if ('problem' in status) return { kind: 'failed', reason: `corrupt: ${status.problem}` };
  if (status.requestId === '') return { kind: 'skipped', reason: 'it has no RequestId' };
  if (status.status === RunStatus.NotStarted)
    return { kind: 'skipped', reason: 'the run never started' };
  if (!RUN_ID_PATTERN.test(status.requestId))
    return {
      kind: 'failed',
      reason: `its RequestId ${JSON.stringify(status.requestId)} cannot be a Trellis run id (letters, digits, "-", "_", at most 64)`,
    };
  const name = status.name || file.dagName;
  const ref = { name, dagRunId: status.requestId };
  if (await exists(opts.store, ref))
    return {
      kind: 'skipped',
      reason: `run ${ref.dagRunId} of DAG "${name}" is already in the store`,
    };

  let run;
  try {
    run = convertLegacyRun(status, file.dagName, definition(name), {
      runLog: opts.store.runLogPath(ref),
      stepStdout: (node) => opts.store.stepLogPaths(ref, node).stdoutPath,
      exists: existsSync,
    });
  } catch (e) {
    return { kind: 'failed', reason: (e as Error).message };
  }
  if (opts.dryRun) return { kind: 'converted' };
  try {
    await opts.store.createRun(run.record, { dag: run.dag, localDags: [] });
  } catch (e) {
    if (AppError.is(e) && e.code === ErrorCode.AlreadyExists)
      return {
        kind: 'skipped',
        reason: `run ${ref.dagRunId} of DAG "${name}" is already in the store`,
      };
    return { kind: 'failed', reason: `could not be stored: ${(e as Error).message}` };
  }
  for (const c of run.logs) {
    try {
      await copyLog(c);
    } catch (e) {
      return {
        kind: 'failed',
        reason: `stored, but its log ${c.from} could not be copied: ${(e as Error).message}`,
      };
    }
  }
  return { kind: 'converted' };
};

const exists = async (
  store: FsRunStore,
  ref: { name: string; dagRunId: string },
): Promise<boolean> => {
  try {
    await store.getRun(ref);
    return true;
  } catch (e) {
    if (AppError.is(e) && e.code === ErrorCode.NotFound) return false;
    return true; // a record is there, even if unreadable: never overwrite it
  }
};

/** Hard-links a log into the store (a copy across file systems); never replaces a file. */
const copyLog = async (c: LogCopy): Promise<void> => {
  try {
    await link(c.from, c.to);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return;
    await copyFile(c.from, c.to, constants.COPYFILE_EXCL).catch((err: unknown) => {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    });
  }
};
