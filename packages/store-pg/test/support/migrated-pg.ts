import { afterAll, beforeAll } from 'vitest';
import { startPostgres, type PrivatePostgres } from '@trellis/testkit';
import { PgDb } from '../../src/db/pg-db.js';
import { migrate } from '../../src/migrate/migrations.js';

/** What a test file gets from `useMigratedPg`, readable once the file's `beforeAll` ran. */
export interface MigratedPg {
  server(): PrivatePostgres;
  /** The migrated database's URL. */
  url(): string;
  /** Pool `i` of `pools`, all on `url()`, each as a separate process would have it. */
  db(i: number): PgDb;
}

/**
 * A private PostgreSQL server for one test file with one migrated database and `pools` pools
 * on it, all stopped after the file's tests.
 */
export const useMigratedPg = (opts: {
  pools: number;
  poolSize?: number;
  database?: string;
}): MigratedPg => {
  let pg: PrivatePostgres | undefined;
  let url = '';
  const dbs: PgDb[] = [];
  beforeAll(async () => {
    pg = await startPostgres();
    url = opts.database === undefined ? pg.url : await pg.createDatabase(opts.database);
    for (let i = 0; i < opts.pools; i++) dbs.push(new PgDb({ url, poolSize: opts.poolSize ?? 2 }));
    await migrate(dbs[0]!);
  });
  afterAll(async () => {
    await Promise.all(dbs.map((d) => d.end()));
    await pg?.stop();
  });
  const ready = <T>(v: T | undefined, what: string): T => {
    if (v === undefined) throw new Error(`useMigratedPg: ${what} is read before beforeAll ran`);
    return v;
  };
  return {
    server: () => ready(pg, 'the server'),
    url: () => ready(pg && url, 'the URL'),
    db: (i) => ready(dbs[i], `pool ${i}`),
  };
};
