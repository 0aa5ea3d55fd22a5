import { AppError, ConfigError } from '@trellis/core';
import { ExitCode, type CliIo } from '../io.js';
import type { Command } from './command.js';
import { parseCommandArgs } from './flags.js';

const MIGRATE_USAGE = 'trellis db migrate [--home <dir>] [--config <file>]';
const STATUS_USAGE = 'trellis db status [--home <dir>] [--config <file>]';

type DbAction = 'migrate' | 'status';

/** The store-pg package, loaded only by the commands that use it. */
const storePg = () => import('@trellis/store-pg');

/** Applies pending migrations, or lists them; the database of `database.url`. */
const act = async (action: DbAction, io: CliIo, url: string, poolSize: number): Promise<void> => {
  const { PgDb, migrate, migrationStatus } = await storePg();
  const db = new PgDb({ url, poolSize: Math.min(poolSize, 2) });
  try {
    if (action === 'migrate') {
      const applied = await migrate(db);
      io.out(
        applied.length === 0
          ? 'the database is up to date: no migration to apply'
          : `applied ${applied.length} migration(s): ${applied.join(', ')}`,
      );
      return;
    }
    const states = await migrationStatus(db);
    for (const m of states)
      io.out(`${String(m.version).padStart(3, '0')} ${m.name}  ${m.appliedAt ?? 'pending'}`);
    const pending = states.filter((m) => m.appliedAt === undefined).length;
    io.out(pending === 0 ? 'up to date' : `${pending} pending: run trellis db migrate`);
  } finally {
    await db.end();
  }
};

const runDb =
  (action: DbAction, usage: string) =>
  async (args: readonly string[], io: CliIo): Promise<ExitCode> => {
    const name = `db ${action}`;
    const { values, positionals } = parseCommandArgs(args, {});
    if (positionals.length > 0) {
      io.err(
        `trellis ${name}: unexpected argument ${JSON.stringify(positionals[0])}\nusage: ${usage}`,
      );
      return ExitCode.Usage;
    }
    try {
      // the config schema (zod) loads when the command runs, not with --help
      const { loadConfig } = await import('../wiring/config-loader.js');
      const { config } = loadConfig({
        env: io.env,
        argv: { home: values.home, config: values.config },
        cwd: io.cwd,
      });
      if (config.database === undefined) {
        io.err(
          `trellis ${name}: no database configured: set SVC_DATABASE_URL (postgres://...) or database.url in the config file`,
        );
        return ExitCode.Usage;
      }
      await act(action, io, config.database.url, config.database.poolSize);
      return ExitCode.Ok;
    } catch (e) {
      if (e instanceof ConfigError) {
        io.err(`trellis ${name}: ${e.message}`);
        return ExitCode.Usage;
      }
      if (AppError.is(e) || e instanceof Error) {
        io.err(`trellis ${name}: ${e.message}`);
        return ExitCode.Failure;
      }
      throw e;
    }
  };

export const dbMigrateCommand: Command = {
  name: 'db migrate',
  summary: 'apply the PostgreSQL store schema migrations not applied yet',
  usage: MIGRATE_USAGE,
  details:
    'Uses the database of SVC_DATABASE_URL (database.url). Safe to run while instances start: migrations are applied under an advisory lock, once. Exit 0 when the database is up to date.',
  run: runDb('migrate', MIGRATE_USAGE),
};

export const dbStatusCommand: Command = {
  name: 'db status',
  summary: 'list the PostgreSQL store schema migrations, applied or pending',
  usage: STATUS_USAGE,
  details: 'Uses the database of SVC_DATABASE_URL (database.url).',
  run: runDb('status', STATUS_USAGE),
};
