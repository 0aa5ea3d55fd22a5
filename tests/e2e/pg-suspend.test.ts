import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, type PrivatePostgres } from '@trellis/testkit';
import { roleOf, startListedInstance } from './support/pg-instance.js';
import { callApi, type StartAll } from './support/start-all.js';

/**
 * Suspend flags shared by replicated start-all instances on one PostgreSQL (issue 20; each has its
 * own data folder, as in docker-compose.yml): a DAG suspended through one instance is suspended
 * for every other, the leader's scheduler included (its cron reads the same flags as its API).
 */
let postgres: PrivatePostgres;
let databaseUrl: string;
let root: string;
const instances: StartAll[] = [];

beforeAll(async () => {
  postgres = await startPostgres();
  databaseUrl = await postgres.createDatabase('trellis_suspend');
  root = mkdtempSync(join(tmpdir(), 'trellis-e2e-pg-suspend-'));
  mkdirSync(join(root, 'dags'));
  writeFileSync(
    join(root, 'dags', 'nightly.yaml'),
    'schedule: "0 3 * * *"\nsteps:\n  - name: s\n    command: echo nightly\n',
  );
});

afterAll(async () => {
  for (const s of instances) await s.stop().catch(() => undefined);
  await postgres.stop();
  rmSync(root, { recursive: true, force: true });
});

/** Polling bound for the other instance's view and for the lease (not a measured figure). */
const SEEN = { timeout: 15_000 };

const suspendedOn = async (s: StartAll, fileName: string): Promise<unknown> => {
  const { body } = await callApi(`${s.url}/api/v2`, 'GET', '/dags');
  const dags = body.dags as { fileName: string; suspended: boolean }[];
  return dags.find((d) => d.fileName === fileName)?.suspended;
};

const suspend = async (s: StartAll, fileName: string, on: boolean): Promise<void> => {
  const r = await callApi(`${s.url}/api/v2`, 'POST', `/dags/${fileName}/suspend`, { suspend: on });
  expect(r.status).toBe(200);
};

describe('suspend flags on PostgreSQL', () => {
  it('a DAG suspended through the follower is suspended on the leader, and back', async () => {
    const a = await startListedInstance(instances, { root, databaseUrl, n: 1 });
    const b = await startListedInstance(instances, { root, databaseUrl, n: 2 });
    await expect
      .poll(async () => [await roleOf(a), await roleOf(b)].sort(), SEEN)
      .toEqual(['follower', 'leader']);
    const [leader, follower] = (await roleOf(a)) === 'leader' ? [a, b] : [b, a];
    expect(await suspendedOn(leader, 'nightly')).toBe(false);

    await suspend(follower, 'nightly', true);
    expect(await suspendedOn(follower, 'nightly')).toBe(true); // its own write: at once
    await expect.poll(() => suspendedOn(leader, 'nightly'), SEEN).toBe(true);

    await suspend(leader, 'nightly', false);
    expect(await suspendedOn(leader, 'nightly')).toBe(false);
    await expect.poll(() => suspendedOn(follower, 'nightly'), SEEN).toBe(false);

    // a third instance starting later loads the flags before it serves
    await suspend(follower, 'nightly', true);
    const c = await startListedInstance(instances, { root, databaseUrl, n: 3 });
    expect(await suspendedOn(c, 'nightly')).toBe(true);
  }, 120_000);
});
