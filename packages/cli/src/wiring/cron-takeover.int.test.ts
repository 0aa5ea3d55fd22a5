import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FakeClock, startPostgres, type PrivatePostgres } from '@trellis/testkit';
import { sharedDbInstances } from '../../test/support/shared-db-instances.js';
import { dagDefinitionsOf, type Runtime } from './runtime.js';
import { startSchedulerRole } from './scheduler-role.js';

/**
 * Issue 20, cron across a take-over on PostgreSQL: the first leader of a new cluster dies after
 * a minute boundary but before it claimed that minute (the fault test's `kill -9` two seconds
 * past a boundary). Its successor fires that minute, once; nothing before the first leader took
 * the lead is fired.
 */
let pg: PrivatePostgres;
let root: string;
const { runtimes, instance } = sharedDbInstances(() => root);
beforeAll(async () => {
  pg = await startPostgres();
  root = mkdtempSync(join(tmpdir(), 'trellis-cron-takeover-'));
  mkdirSync(join(root, 'dags'));
  writeFileSync(join(root, 'dags', 'tick.yaml'), 'schedule: "* * * * *"\nsteps:\n  - "true"\n');
});
afterAll(async () => {
  for (const rt of runtimes) await rt.closeStore();
  await pg.stop();
  rmSync(root, { recursive: true, force: true });
});

/** The ledger's rows of `key`, as ISO times. */
const rowsOf = async (rt: Runtime, key: string): Promise<string[]> =>
  (
    (await rt.database?.query<{ fire_at: Date }>(
      'SELECT fire_at FROM trellis_schedule_fires WHERE dag_name = $1 ORDER BY fire_at',
      [key],
    )) ?? { rows: [] }
  ).rows.map((r) => r.fire_at.toISOString());

it('a successor fires the minute its predecessor never claimed, on a ledger that held no fire', async () => {
  const url = await pg.createDatabase('cron_takeover');
  const lines: string[] = [];
  const first = await instance(1, url, lines);
  const second = await instance(2, url, lines);
  const minute = Math.ceil(Date.now() / 60_000) * 60_000;
  const boundary = new Date(minute).toISOString();
  // the first leader takes the lead 30 s before a boundary
  const clock1 = new FakeClock(minute - 30_000);
  const stop1 = new AbortController();
  const role1 = await startSchedulerRole(
    first,
    dagDefinitionsOf(first, clock1),
    clock1,
    (l) => lines.push(l),
    stop1.signal,
  );
  // its cron loop waits for the boundary (its clock stands still: 30 s to go)
  await expect.poll(() => clock1.sleeps.includes(30_000), { timeout: 10_000 }).toBe(true);
  // it ends before its cron reached the boundary: no fire of it is in the ledger
  stop1.abort();
  await role1.done;
  expect(await rowsOf(first, 'tick')).toEqual([]);
  // the second takes over 2 s past the boundary: it fires that minute at once, without waiting
  // for the next boundary (its clock stands still)
  const clock2 = new FakeClock(minute + 2_000);
  const stop2 = new AbortController();
  const role2 = await startSchedulerRole(
    second,
    dagDefinitionsOf(second, clock2),
    clock2,
    (l) => lines.push(l),
    stop2.signal,
  );
  await expect.poll(() => rowsOf(second, 'tick'), { timeout: 10_000 }).toEqual([boundary]);
  const runs = async (): Promise<number> => (await second.store.listRuns({ name: 'tick' })).length;
  // its run made, the cron loop waits for the next boundary: that minute fires once more, once
  await expect.poll(runs).toBe(1);
  await clock2.advanceBy(60_000);
  const next = new Date(minute + 60_000).toISOString();
  await expect.poll(() => rowsOf(second, 'tick'), { timeout: 10_000 }).toEqual([boundary, next]);
  await expect.poll(runs).toBe(2);
  stop2.abort();
  await role2.done;
}, 60_000);
