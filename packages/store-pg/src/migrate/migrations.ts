import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { toStoreError, type PgDb } from '../db/pg-db.js';

/**
 * The package's `migrations/` folder, the nearest one above this module: beside `src/` and
 * `dist/` in the repository, beside the bundle's `dist/` in the packed `trellis` package
 * (scripts/package.mjs), where this code sits at another depth.
 */
const migrationsDir = (): string => {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++) {
    const candidate = join(dir, 'migrations');
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  throw new Error('the migrations/ folder of @trellis/store-pg was not found above its code');
};

/**
 * The advisory lock key under which migrations are applied: two instances starting together
 * take turns, and the second finds nothing left to do. ("trell" in ASCII.)
 */
export const MIGRATION_LOCK_KEY = 0x7472656c6c;

/** One versioned migration: `NNN_name.sql` in the package's `migrations/` folder. */
interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/** A migration as `trellis db status` shows it. */
export interface MigrationState {
  readonly version: number;
  readonly name: string;
  /** When it was applied (ISO), or undefined while pending. */
  readonly appliedAt?: string | undefined;
}

const FILE_NAME = /^(\d+)_([a-z0-9_]+)\.sql$/;

const loadMigrations = (dir = migrationsDir()): Migration[] =>
  readdirSync(dir)
    .map((f) => ({ f, m: FILE_NAME.exec(f) }))
    .filter((x): x is { f: string; m: RegExpExecArray } => x.m !== null)
    .map(({ f, m }) => ({
      version: Number(m[1]),
      name: m[2] ?? f,
      sql: readFileSync(`${dir}/${f}`, 'utf8'),
    }))
    .sort((a, b) => a.version - b.version);

const CREATE_LEDGER = `CREATE TABLE IF NOT EXISTS trellis_schema_migrations (
  version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`;

/**
 * Applies the migrations not applied yet, each in its own transaction, under a session advisory
 * lock (`pg_advisory_lock`): with several instances starting at once, one applies and the others
 * wait and then find them applied. Returns the versions this call applied.
 */
export const migrate = async (db: PgDb): Promise<number[]> => {
  const migrations = loadMigrations();
  const client = await db.pool.connect().catch((e: unknown) => {
    throw toStoreError(e);
  });
  const applied: number[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      await client.query(CREATE_LEDGER);
      const done = await client.query<{ version: number }>(
        'SELECT version FROM trellis_schema_migrations',
      );
      const have = new Set(done.rows.map((r) => r.version));
      for (const m of migrations) {
        if (have.has(m.version)) continue;
        await client.query('BEGIN');
        try {
          await client.query(m.sql);
          await client.query(
            'INSERT INTO trellis_schema_migrations (version, name) VALUES ($1, $2)',
            [m.version, m.name],
          );
          await client.query('COMMIT');
        } catch (e) {
          await client.query('ROLLBACK');
          throw new Error(`migration ${m.version}_${m.name} failed: ${(e as Error).message}`, {
            cause: e,
          });
        }
        applied.push(m.version);
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } catch (e) {
    throw toStoreError(e);
  } finally {
    client.release();
  }
  return applied;
};

/** Every migration the package has, applied or pending, by version. */
export const migrationStatus = async (db: PgDb): Promise<MigrationState[]> => {
  await db.query(CREATE_LEDGER);
  const done = await db.query<{ version: number; applied_at: Date }>(
    'SELECT version, applied_at FROM trellis_schema_migrations',
  );
  const at = new Map(done.rows.map((r) => [r.version, r.applied_at.toISOString()]));
  return loadMigrations().map((m) => ({
    version: m.version,
    name: m.name,
    appliedAt: at.get(m.version),
  }));
};
