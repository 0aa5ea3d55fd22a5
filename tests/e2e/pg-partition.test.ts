import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgDb } from '@trellis/store-pg';
import { startPostgres, type PrivatePostgres } from '@trellis/testkit';
import { roleOf, startPgInstance } from './support/pg-instance.js';
import { callApi, type StartAll } from './support/start-all.js';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.js';

/**
 * Issue 20 item 4: "a network-partitioned leader stops acting before its lease expires". Two
 * start-all instances on one PostgreSQL; the leader reaches it through a TCP proxy the test cuts
 * (a black hole: no reset, queries simply get no answer). The leader must step down on its own
 * clock before its lease can expire, so before the other instance can take it over; when the
 * network heals it comes back as a follower.
 */
let postgres: PrivatePostgres;
let proxy: TcpProxy;
let db: PgDb;
let direct: string;
let root: string;
const instances: StartAll[] = [];
const TTL_MS = 3000;

const start = async (n: number, databaseUrl: string): Promise<StartAll> => {
  const s = await startPgInstance({ root, n, databaseUrl, lease: { ttlMs: TTL_MS, renewMs: 500 } });
  instances.push(s);
  return s;
};

const leaseToken = async (): Promise<number> =>
  Number(
    (await db.query<{ token: string }>("SELECT token FROM trellis_leases WHERE name = 'scheduler'"))
      .rows[0]?.token,
  );

beforeAll(async () => {
  postgres = await startPostgres();
  direct = await postgres.createDatabase('trellis_partition');
  db = new PgDb({ url: direct, poolSize: 2 });
  proxy = await startTcpProxy(postgres.port);
  root = mkdtempSync(join(tmpdir(), 'trellis-e2e-pg-partition-'));
  mkdirSync(join(root, 'dags'));
  writeFileSync(join(root, 'dags', 'job.yaml'), 'steps:\n  - name: s\n    command: "true"\n');
});

afterAll(async () => {
  proxy.heal();
  for (const s of instances) await s.stop().catch(() => undefined);
  await proxy.close();
  await db.end();
  await postgres.stop();
  rmSync(root, { recursive: true, force: true });
});

describe('a leader cut off from PostgreSQL', () => {
  it('steps down before its lease expires, and comes back as a follower', async () => {
    const viaProxy = direct.replace(`:${postgres.port}/`, `:${proxy.port}/`);
    const cutOff = await start(1, viaProxy);
    await expect.poll(() => roleOf(cutOff), { timeout: 15_000 }).toBe('leader');
    const other = await start(2, direct);
    expect(await roleOf(other)).toBe('follower');
    const tokenBefore = await leaseToken();

    proxy.cut();
    let steppedDown = false;
    const stepped = cutOff
      .waitFor('stepping down before it can expire')
      .then(() => (steppedDown = true));
    // the first moment the other instance leads, the cut-off one has already stepped down
    let tookOver = false;
    await expect
      .poll(
        async () => {
          const role = await roleOf(other);
          if (role === 'leader' && !tookOver) {
            tookOver = true;
            expect(steppedDown, cutOff.output()).toBe(true);
          }
          return role;
        },
        { timeout: 20_000, interval: 50 },
      )
      .toBe('leader');
    await stepped;
    expect(await leaseToken()).toBe(tokenBefore + 1);

    proxy.heal();
    await cutOff.waitFor('standing by');
    expect(await roleOf(cutOff)).toBe('follower');
    expect(await roleOf(other)).toBe('leader');
    // and the API of the healed instance works on the shared store
    const r = await callApi(`${cutOff.url}/api/v2`, 'POST', '/dags/job/start', {});
    expect(r.status).toBe(200);
  }, 120_000);
});
