import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunStatus, systemClock } from '@trellis/core';
import type { Dag, DagRunRecord, RunOwner } from '@trellis/spec';
import { PgDb, PgRunStore } from '@trellis/store-pg';
import { makeRunRecord, startPostgres, type PrivatePostgres } from '@trellis/testkit';
import { roleOf, startPgInstance } from './support/pg-instance.js';
import type { StartAll } from './support/start-all.js';

/**
 * Cross-host run liveness (docs/ha.md, "Failure modes"): a run executed by an instance on another
 * host, which the pid probe cannot judge, is failed by the leader's lost-run recovery once that
 * instance's heartbeat row in `trellis_instances` is older than three lease TTLs, and not while
 * it beats. The other host is played by the test: its heartbeat rows and its runs' records.
 */
let postgres: PrivatePostgres;
let db: PgDb;
let root: string;
let leader: StartAll | undefined;

beforeAll(async () => {
  postgres = await startPostgres();
  const databaseUrl = await postgres.createDatabase('trellis_lost');
  root = mkdtempSync(join(tmpdir(), 'trellis-e2e-pg-lost-'));
  mkdirSync(join(root, 'dags'));
  writeFileSync(join(root, 'dags', 'job.yaml'), 'steps:\n  - name: s\n    command: sleep 600\n');
  // lease of 1 s: an instance unseen for 3 s has lost its runs
  leader = await startPgInstance({ root, n: 1, databaseUrl, lease: { ttlMs: 1000, renewMs: 250 } });
  db = new PgDb({ url: databaseUrl, poolSize: 2 });
});

afterAll(async () => {
  await leader?.stop();
  await db.end();
  await postgres.stop();
  rmSync(root, { recursive: true, force: true });
});

const farOwner = (host: string): RunOwner => ({
  host,
  pid: 4242,
  processStart: '2026-01-01T00:00:00.000Z',
  workerId: 'local',
});

const runOwnedBy = (id: string, owner: RunOwner): DagRunRecord => {
  const r = makeRunRecord({ name: 'job', params: [] } as unknown as Dag, id);
  const startedAt = new Date().toISOString();
  return { ...r, status: RunStatus.Running, startedAt, owner };
};

const beat = (o: RunOwner): Promise<unknown> =>
  db.query(
    `INSERT INTO trellis_instances (host, pid, process_start) VALUES ($1, $2, $3)
     ON CONFLICT (host, pid, process_start) DO UPDATE SET last_seen = now()`,
    [o.host, o.pid, o.processStart],
  );

const runOf = async (id: string): Promise<DagRunRecord> =>
  (
    await db.query<{ record: DagRunRecord }>(
      "SELECT record FROM trellis_runs WHERE name = 'job' AND dag_run_id = $1",
      [id],
    )
  ).rows[0]?.record as DagRunRecord;

describe('lost-run recovery across hosts (PostgreSQL store)', () => {
  it('fails the runs of an instance on another host once it stops heartbeating, not before', async () => {
    expect(await roleOf(leader as StartAll)).toBe('leader');
    const store = new PgRunStore({ db, logDir: join(root, 'logs'), clock: systemClock });
    const [beating, silent] = [farOwner('far-host-a'), farOwner('far-host-b')];
    await beat(beating);
    await beat(silent); // it beats once, then is lost (kill -9, a lost host)
    const snapshot = { dag: {}, localDags: [] };
    await store.createRun(runOwnedBy('run-beating', beating), snapshot);
    await store.createRun(runOwnedBy('run-silent', silent), snapshot);
    const timer = setInterval(() => void beat(beating).catch(() => undefined), 250);
    try {
      // a recovery pass judged the silent instance's run lost ...
      await expect
        .poll(async () => (await runOf('run-silent')).status, { timeout: 60_000, interval: 250 })
        .toBe(RunStatus.Failed);
      // ... and, in that same pass, left the run of the instance still beating alone
      expect((await runOf('run-beating')).status).toBe(RunStatus.Running);
    } finally {
      clearInterval(timer);
    }
    const failed = await runOf('run-silent');
    expect(failed.error).toMatch(/pid 4242 on far-host-b\) died before it finished/);
    expect(failed.nodes.every((n) => n.status !== 1)).toBe(true);
    // the other instance stops beating: its run is failed in turn
    await expect
      .poll(async () => (await runOf('run-beating')).status, { timeout: 60_000, interval: 250 })
      .toBe(RunStatus.Failed);
    expect((await runOf('run-beating')).error).toMatch(/far-host-a/);
  }, 180_000);
});
