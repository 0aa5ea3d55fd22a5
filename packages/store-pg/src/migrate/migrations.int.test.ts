import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, type PrivatePostgres } from '@trellis/testkit';
import { PgDb } from '../db/pg-db.js';
import { migrate, migrationStatus } from './migrations.js';

let pg: PrivatePostgres;
beforeAll(async () => {
  pg = await startPostgres();
});
afterAll(async () => {
  await pg.stop();
});

describe('migrations', () => {
  it('are applied once when two instances start together, and status lists them applied', async () => {
    const a = new PgDb({ url: pg.url });
    const b = new PgDb({ url: pg.url });
    try {
      expect((await migrationStatus(a)).every((m) => m.appliedAt === undefined)).toBe(true);
      const [x, y] = await Promise.all([migrate(a), migrate(b)]);
      const all = (await migrationStatus(a)).map((m) => m.version);
      expect(all.length).toBeGreaterThan(0);
      // one instance applied every migration, the other found nothing left to do
      expect([x, y].sort((p, q) => q.length - p.length)).toEqual([all, []]);
      expect((await migrationStatus(b)).every((m) => m.appliedAt !== undefined)).toBe(true);
      expect(await migrate(a)).toEqual([]);
      const tables = await a.query<{ n: string }>(
        "SELECT count(*) AS n FROM pg_tables WHERE tablename LIKE 'trellis_%'",
      );
      expect(Number(tables.rows[0]?.n)).toBeGreaterThanOrEqual(6);
    } finally {
      await Promise.all([a.end(), b.end()]);
    }
  });
});
