import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { PgDb } from '@trellis/store-pg';
import { startPostgres, type PrivatePostgres } from '@trellis/testkit';
import { databaseHealth } from './leadership-metrics.js';

/** `GET /health`'s database part (docs/ha.md): a real round trip, and a bounded wait for one. */
let pg: PrivatePostgres;
beforeAll(async () => {
  pg = await startPostgres();
});
afterAll(async () => {
  await pg.stop();
});
afterEach(() => {
  vi.useRealTimers();
});

/** A server that accepts connections and never answers: a database behind a partition. */
const blackHole = async (): Promise<{ port: number; close: () => Promise<void> }> => {
  const sockets: Socket[] = [];
  const server: Server = createServer((s) => sockets.push(s));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
};

describe('databaseHealth', () => {
  it('measures a round trip and reports the pool of poolSize', async () => {
    const db = new PgDb({ url: pg.url, poolSize: 3 });
    try {
      const h = await databaseHealth(db);
      expect(h.latencyMs).toBeGreaterThan(0);
      expect(h.pool).toEqual({ size: 3, inUse: 0, idle: 1, waiting: 0 });
    } finally {
      await db.end();
    }
  });

  it('reports no latency after 2 s of no answer, before the pool gives up (5 s)', async () => {
    const hole = await blackHole();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const db = new PgDb({ url: `postgres://postgres@127.0.0.1:${hole.port}/x`, poolSize: 2 });
    try {
      let answer: unknown;
      const pending = databaseHealth(db).then((h) => (answer = h));
      await vi.advanceTimersByTimeAsync(1999);
      expect(answer).toBeUndefined();
      await vi.advanceTimersByTimeAsync(1);
      await pending;
      expect(answer).toMatchObject({ latencyMs: null, pool: { size: 2, waiting: 0 } });
      await vi.advanceTimersByTimeAsync(5000); // the pool's connect time-out ends the attempt
    } finally {
      vi.useRealTimers();
      await db.end();
      await hole.close();
    }
  });
});
