import { resolve } from 'node:path';
import { systemClock } from '@trellis/core';
import type { MigrationIssue } from '@trellis/store';
import { ExitCode, type CliIo } from '../io.js';
import type { Command } from './command.js';
import { parseCommandArgs, withRuntime } from './common.js';
import type { FlagSpecs } from './flags.js';

const USAGE = 'trellis migrate history [--from <old data folder>] [--dry-run]';
const OPTIONS = {
  from: {
    type: 'string',
    value: '<dir>',
    description: "the old data folder (default: this installation's data folder)",
    example: 'trellis migrate history --from /var/lib/old/data',
  },
  'dry-run': {
    type: 'boolean',
    description: 'convert and report, but store and move nothing',
    example: 'trellis migrate history --dry-run',
  },
} as const satisfies FlagSpecs;

/** Problems listed one per line; the rest are counted. */
const SHOWN = 10;

/** "980 already in the store, 20 never started": skip reasons by kind. */
const skipSummary = (skipped: readonly MigrationIssue[]): string => {
  const counts = new Map<string, number>();
  for (const s of skipped) {
    const kind = s.reason.endsWith('is already in the store') ? 'already in the store' : s.reason;
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  return [...counts].map(([k, n]) => `${n} ${k.replace(/^the run /, '')}`).join(', ');
};

/**
 * `trellis migrate history`: imports the run history of the 1.16 file format (per-DAG folders of
 * `.dat` files) from `--from` (default: the data folder) into the store. Exit 0 when every file
 * converted or had nothing to convert, 1 when some failed (they are listed; run it again after
 * fixing or removing them: converted runs are skipped).
 */
const run = async (args: readonly string[], io: CliIo): Promise<ExitCode> => {
  const { values, positionals } = parseCommandArgs(args, OPTIONS);
  if (positionals.length > 0) {
    io.err(
      `trellis migrate history: unexpected argument ${JSON.stringify(positionals[0])}; name the old data folder with --from <dir>\nusage: ${USAGE}`,
    );
    return ExitCode.Usage;
  }
  return withRuntime('migrate history', io, values, async (rt) => {
    const legacyDir = values.from ? resolve(io.cwd, values.from) : rt.config.paths.dataDir;
    const dryRun = values['dry-run'] === true;
    const { FsRunStore, migrateHistory } = await import('@trellis/store'); // not loaded by --help
    if (!(rt.store instanceof FsRunStore)) {
      io.err(
        'trellis migrate history: converts into the file store only; unset SVC_DATABASE_URL (database.url) to convert, then copy the runs into PostgreSQL',
      );
      return ExitCode.Usage;
    }
    const report = await migrateHistory({
      legacyDir,
      store: rt.store,
      clock: systemClock,
      dryRun,
      loadDag: (name) => (rt.dags.locate(name) ? rt.dags.load(name).dag : undefined),
    });
    if (report.folders.length === 0) {
      io.out(`no 1.16 run history in ${legacyDir} (DAG folders holding .dat files); nothing to do`);
      return ExitCode.Ok;
    }
    io.out(`found ${report.folders.length} legacy DAG folder(s) in ${legacyDir}`);
    io.out(
      `${dryRun ? 'would convert' : 'converted'} ${report.converted} run(s), skipped ${report.skipped.length}, failed ${report.failed.length}`,
    );
    if (report.skipped.length > 0) io.out(`  skipped: ${skipSummary(report.skipped)}`);
    for (const f of report.failed.slice(0, SHOWN)) io.err(`  failed: ${f.file}: ${f.reason}`);
    if (report.failed.length > SHOWN) io.err(`  ... and ${report.failed.length - SHOWN} more`);
    if (dryRun) io.out('dry run: nothing was stored or moved');
    else if (report.archivedTo) io.out(`moved the legacy folders to ${report.archivedTo}`);
    else
      io.out(
        'the legacy folders stay where they are until every file converts: fix or remove the failed files and run it again (converted runs are skipped)',
      );
    return report.failed.length > 0 ? ExitCode.Failure : ExitCode.Ok;
  });
};

export const migrateHistoryCommand: Command = {
  name: 'migrate history',
  summary: 'import run history of the 1.16 file format',
  usage: USAGE,
  options: OPTIONS,
  run,
};
