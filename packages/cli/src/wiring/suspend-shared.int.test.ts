import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { systemClock } from '@trellis/core';
import { FakeClock, startPostgres, type PrivatePostgres } from '@trellis/testkit';
import { sharedDbInstances } from '../../test/support/shared-db-instances.js';
import { dagDefinitionsOf } from './runtime.js';
import { startSchedulerRole } from './scheduler-role.js';

/**
 * Issue 20: two instances on one PostgreSQL, each with its own data folder. A DAG suspended
 * through the follower is not fired by the leader's cron; an unsuspended one is, in the same pass.
 */
let pg: PrivatePostgres;
let root: string;
const { runtimes, instance } = sharedDbInstances(() => root);
beforeAll(async () => {
  pg = await startPostgres();
  root = mkdtempSync(join(tmpdir(), 'trellis-suspend-shared-'));
  mkdirSync(join(root, 'dags'));
  for (const name of ['held', 'tick'])
    writeFileSync(
      join(root, 'dags', `${name}.yaml`),
      'schedule: "* * * * *"\nsteps:\n  - "true"\n',
    );
});
afterAll(async () => {
  for (const rt of runtimes) await rt.closeStore();
  await pg.stop();
  rmSync(root, { recursive: true, force: true });
});

it("the leader's cron skips a DAG suspended through another instance", async () => {
  const url = await pg.createDatabase('suspend_shared');
  const lines: string[] = [];
  const leader = await instance(1, url, lines);
  const follower = await instance(2, url, lines);
  await dagDefinitionsOf(follower, systemClock).setSuspended('held', true);
  await expect.poll(() => leader.suspendFlags?.has('held'), { timeout: 10_000 }).toBe(true);

  const clock = new FakeClock(Date.now());
  const stop = new AbortController();
  const role = await startSchedulerRole(
    leader,
    dagDefinitionsOf(leader, clock),
    clock,
    (l) => lines.push(l),
    stop.signal,
  );
  await expect.poll(() => role.status.running()).toBe(true);
  const runsOf = async (name: string): Promise<number> =>
    (await leader.store.listRuns({ name })).length;
  // two minutes: the second pass begins once the first one's starts are done (the cron loop
  // awaits each pass), so a start of held in the first pass would have landed by then
  for (const minute of [1, 2]) {
    await clock.advanceBy(60_000);
    try {
      await expect.poll(() => runsOf('tick'), { timeout: 10_000 }).toBe(minute);
    } catch (e) {
      // what the role said (a claim retried on the fake clock, a store call failed)
      console.log(`minute ${minute}: the role's lines:\n${lines.join('\n')}`);
      throw e;
    }
  }
  expect(await runsOf('held')).toBe(0);
  stop.abort();
  await role.done;
}, 60_000);
