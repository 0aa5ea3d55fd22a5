import { afterAll, afterEach, beforeAll } from 'vitest';
import { migrate, PgDb, PgRunStore } from '@trellis/store-pg';
import { startPostgres, type PrivatePostgres } from '@trellis/testkit';
import { describeRunStoreConformance, fixedClock } from './run-store-conformance.js';

let pg: PrivatePostgres;
let n = 0;
const pools: PgDb[] = [];

let admin: PgDb;

beforeAll(async () => {
  pg = await startPostgres();
  // a migrated template: each test's database is a copy (faster than migrating each)
  const base = new PgDb({ url: await pg.createDatabase('conformance_base') });
  await migrate(base);
  await base.end();
  admin = new PgDb({ url: pg.url, poolSize: 1 });
});
afterAll(async () => {
  await admin.end();
  await pg.stop();
});
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.end()));
});

/** One database per test: each starts empty, as the file store's temp folder does. */
const subject = (maxCachedRuns?: number) => async () => {
  const name = `conformance_${++n}`;
  await admin.query(`CREATE DATABASE ${name} TEMPLATE conformance_base`);
  const url = pg.url.replace(/\/postgres$/, `/${name}`);
  const open = (): PgRunStore => {
    const db = new PgDb({ url, poolSize: 4 });
    pools.push(db);
    return new PgRunStore({
      db,
      logDir: '/var/trellis/logs',
      clock: fixedClock,
      ...(maxCachedRuns === undefined ? {} : { maxCachedRuns }),
    });
  };
  return { store: open(), another: open, ...(maxCachedRuns === 0 ? { noChangeStamps: true } : {}) };
};

describeRunStoreConformance('PostgreSQL store', subject());
// past its memory limit the listing is one query per call: the same behaviour
describeRunStoreConformance('PostgreSQL store, listing from the database', subject(0));
