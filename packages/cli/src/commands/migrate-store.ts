import { join, resolve } from 'node:path';
import { AppError, ConfigError, systemClock } from '@trellis/core';
import { ExitCode, type CliIo } from '../io.js';
import type { Command } from './command.js';
import { parseCommandArgs, type FlagSpecs } from './flags.js';
import { moveStore, type MoveTarget } from './migrate-store-run.js';

const USAGE =
  'trellis migrate store --to postgres [--database-url <url>] | --to files --out <dir> [--database-url <url>]';
const OPTIONS = {
  to: {
    type: 'string',
    value: 'postgres|files',
    description:
      'postgres: copy this home (SVC_HOME) into the database; files: export the database into the home --out',
    example: 'trellis migrate store --to postgres',
  },
  from: {
    type: 'string',
    value: 'files|postgres',
    description:
      'the other way to say it: --from postgres is --to files, --from files is --to postgres',
    example: 'trellis migrate store --from postgres --out /backup/trellis-home',
  },
  out: {
    type: 'string',
    value: '<dir>',
    description:
      'with --to files: the home folder to write (its data/ and logs/), made when missing',
    example: 'trellis migrate store --to files --out /backup/trellis-home',
  },
  'database-url': {
    type: 'string',
    value: '<url>',
    description: 'the database (default SVC_DATABASE_URL, else database.url of the config file)',
    example:
      'trellis migrate store --to postgres --database-url postgres://trellis:secret@db:5432/trellis',
  },
} as const satisfies FlagSpecs;

type Values = ReturnType<typeof parseCommandArgs<typeof OPTIONS>>['values'];

/** The direction asked for (`postgres` or `files`), or a sentence saying what to write instead. */
const targetOf = (v: Values): string => {
  const from =
    v.from === undefined
      ? undefined
      : v.from === 'postgres'
        ? 'files'
        : v.from === 'files'
          ? 'postgres'
          : 'bad';
  if (from === 'bad')
    return `unknown --from ${JSON.stringify(v.from)}: use --from files or --from postgres`;
  const to = v.to ?? from;
  if (to === undefined)
    return 'say where to: --to postgres (copy this home in) or --to files --out <dir> (export)';
  if (from !== undefined && from !== to)
    return '--to and --from name the same store: give one of them';
  if (to !== 'postgres' && to !== 'files')
    return `unknown --to ${JSON.stringify(to)}: use --to postgres or --to files`;
  if (to === 'files' && v.out === undefined)
    return '--to files needs --out <dir>: the home folder to write the export into';
  if (to === 'postgres' && v.out !== undefined)
    return '--out is for --to files; --to postgres copies the home of --home (or SVC_HOME)';
  return to;
};

const URL_PATTERN = /^postgres(ql)?:\/\/\S+$/;

/**
 * `trellis migrate store`: moves runs between the file store and the PostgreSQL store (docs/ha.md,
 * "Moving an existing home"). Exit 0 when everything was copied, 1 when some runs failed (listed)
 * or the database could not be reached, 2 for bad flags or config.
 */
const run = async (args: readonly string[], io: CliIo): Promise<ExitCode> => {
  const { values, positionals } = parseCommandArgs(args, OPTIONS);
  const name = 'trellis migrate store';
  const target = targetOf(values);
  const url = values['database-url'];
  const usage =
    positionals.length > 0
      ? `unexpected argument ${JSON.stringify(positionals[0])}`
      : target !== 'postgres' && target !== 'files'
        ? target
        : url !== undefined && !URL_PATTERN.test(url)
          ? `invalid --database-url ${JSON.stringify(url)}: use a postgres:// URL, e.g. postgres://trellis:secret@localhost:5432/trellis`
          : undefined;
  if (usage !== undefined) {
    io.err(`${name}: ${usage}\nusage: ${USAGE}`);
    return ExitCode.Usage;
  }
  try {
    const { loadConfig } = await import('../wiring/config-loader.js'); // zod: not for --help
    const { config } = loadConfig({
      env: url === undefined ? io.env : { ...io.env, SVC_DATABASE_URL: url },
      argv: { home: values.home, config: values.config },
      cwd: io.cwd,
    });
    if (config.database === undefined) {
      io.err(`${name}: no database: give --database-url postgres://... or set SVC_DATABASE_URL`);
      return ExitCode.Usage;
    }
    const out = values.out === undefined ? undefined : resolve(io.cwd, values.out);
    return await moveStore(io, {
      target: target as MoveTarget,
      url: config.database.url,
      dataDir: out === undefined ? config.paths.dataDir : join(out, 'data'),
      logDir: out === undefined ? config.paths.logDir : join(out, 'logs'),
      clock: systemClock,
    });
  } catch (e) {
    if (e instanceof ConfigError) {
      io.err(`${name}: ${e.message}`);
      return ExitCode.Usage;
    }
    if (AppError.is(e) || e instanceof Error) {
      io.err(`${name}: ${e.message}`);
      return ExitCode.Failure;
    }
    throw e;
  }
};

export const migrateStoreCommand: Command = {
  name: 'migrate store',
  summary: 'copy a file home into the PostgreSQL store, or export the database to a file home',
  usage: USAGE,
  details: [
    'Copies runs (records, node statuses, DAG snapshots, child runs), queued runs, stop requests and run and step logs. Idempotent: run it again to copy what changed since; nothing is copied twice, and a cut copy is taken up where it stopped. The schema is migrated first.',
    'Examples:',
    '  SVC_DATABASE_URL=postgres://trellis:secret@db:5432/trellis trellis migrate store --to postgres',
    '  trellis migrate store --to files --out /backup/trellis-home --database-url postgres://trellis@db/trellis',
    'Exit 0 when everything was copied, 1 when some runs failed (listed) or the database is unreachable, 2 for bad flags.',
  ].join('\n'),
  options: OPTIONS,
  run,
};
