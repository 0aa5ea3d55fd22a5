import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgDb } from '@trellis/store-pg';
import { startPostgres, type PrivatePostgres } from '@trellis/testkit';
import { roleOf, startListedInstance } from './support/pg-instance.js';
import { callApi, untilFinal, type StartAll } from './support/start-all.js';

/**
 * Replicated start-all instances on one PostgreSQL (issue 20 item 4): one leader for cron and the
 * queues through the lease; a leader killed with SIGKILL is replaced; a leader frozen past its
 * lease acts on nothing when resumed (it steps down on its own clock; a fire claim it made would be
 * refused by its stale token, and counted). Cron fires
 * each minute once: the fire ledger has one row per minute and the DAG one run per row.
 */
let postgres: PrivatePostgres;
let databaseUrl: string;
let db: PgDb;
let root: string;
const instances: StartAll[] = [];

const DAGS = (): string => join(root, 'dags');

const startInstance = (n: number): Promise<StartAll> =>
  startListedInstance(instances, { root, databaseUrl, n });

beforeAll(async () => {
  postgres = await startPostgres();
  databaseUrl = await postgres.createDatabase('trellis_ha');
  db = new PgDb({ url: databaseUrl, poolSize: 2 });
  root = mkdtempSync(join(tmpdir(), 'trellis-e2e-pg-leader-'));
  mkdirSync(DAGS());
  writeFileSync(
    join(DAGS(), 'tick.yaml'),
    'schedule: "* * * * *"\nsteps:\n  - name: s\n    command: echo tick\n',
  );
  writeFileSync(
    join(DAGS(), 'job.yaml'),
    `steps:\n  - name: s\n    command: sh -c 'echo $DAG_RUN_ID >> ${join(root, 'ledger')}'\n`,
  );
});

afterAll(async () => {
  for (const s of instances) {
    s.proc.kill('SIGCONT');
    await s.stop().catch(() => undefined);
  }
  await db.end();
  await postgres.stop();
  rmSync(root, { recursive: true, force: true });
});

const fires = async (): Promise<{ at: number; by: string }[]> =>
  (
    await db.query<{ fire_at: Date; fired_by: string }>(
      "SELECT fire_at, fired_by FROM trellis_schedule_fires WHERE dag_name = 'tick' ORDER BY fire_at",
    )
  ).rows.map((r) => ({ at: r.fire_at.getTime(), by: r.fired_by }));

const readLedger = (): string[] => {
  const path = join(root, 'ledger');
  return existsSync(path)
    ? readFileSync(path, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
    : [];
};

const pidOf = (holder: string): number => Number(holder.split(':')[1]);

/** Resolves once the wall clock is `second` seconds into a minute (cron works in minutes). */
const untilSecondOfMinute = async (second: number): Promise<void> => {
  const ms = (second * 1000 - (Date.now() % 60_000) + 60_000) % 60_000;
  await new Promise((r) => setTimeout(r, ms));
};

/** Polling bound for a take-over (the lease's TTL plus a renewal here; timings are benched). */
const LEADER_WAIT = { timeout: 15_000 };

const leaderOf = async (candidates: StartAll[]): Promise<StartAll> => {
  let found: StartAll | undefined;
  await expect
    .poll(async () => {
      const roles = await Promise.all(candidates.map(roleOf));
      found = candidates[roles.indexOf('leader')];
      return roles.filter((r) => r === 'leader').length;
    }, LEADER_WAIT)
    .toBe(1);
  return found as StartAll;
};

/** Whether `t` still runs (not killed). */
const isLive = (t: StartAll): boolean => t.proc.exitCode === null && t.proc.signalCode === null;

/**
 * Starts a run of `job` with Idempotency-Key `key`, as a client that must know its run does
 * (docs/api.md, "Idempotent triggers"): an answer lost (the instance killed mid-request) or not
 * settled (5xx; 409 `already_running` while the key's first request is pending) is asked again
 * with the same key of the next live instance, which answers the one run of that key. The run's
 * id, or undefined when refused for good.
 */
const startKeyed = async (live: () => StartAll[], key: string): Promise<string | undefined> => {
  for (let attempt = 0; attempt < 120; attempt++) {
    const targets = live();
    const t = targets[attempt % targets.length];
    if (!t) return undefined;
    const r = await fetch(`${t.url}/api/v2/dags/job/start`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': key },
      body: '{}',
    })
      .then(async (res) => ({
        status: res.status,
        body: (await res.json()) as { dagRunId?: string; code?: string },
      }))
      .catch(() => undefined); // the answer lost (a reset, a cut body)
    if (r?.status === 200) return r.body.dagRunId;
    const pending = r?.status === 409 && r.body.code === 'already_running';
    const settled = r !== undefined && r.status < 500 && !pending;
    if (settled) return undefined;
    // the pace of a client's retries (not a wait for an event)
    await new Promise((res) => setTimeout(res, 500));
  }
  throw new Error(`Idempotency-Key ${key}: no settled answer after 120 attempts`);
};

/**
 * Posts runs of `job` to the live instances in turn until stopped; the ids accepted (200). Each
 * start is sent without waiting for the ones before it: a key the killed leader had claimed is
 * retried (up to its claim's 30 s) while the stream goes on with new keys. `stop` waits for every
 * start to settle, and fails with the first that never got a settled answer.
 */
const streamRuns = (targets: () => StartAll[]): { stop: () => Promise<string[]> } => {
  const accepted: string[] = [];
  const starts: Promise<void>[] = [];
  const failures: unknown[] = [];
  let running = true;
  const loop = (async () => {
    for (let i = 0; running; i++) {
      const live = () => {
        const all = targets().filter(isLive);
        return [
          ...all.slice(i % Math.max(all.length, 1)),
          ...all.slice(0, i % Math.max(all.length, 1)),
        ];
      };
      starts.push(
        startKeyed(live, `stream-${i}`).then(
          (id) => void (id !== undefined && accepted.push(id)),
          (e: unknown) => void failures.push(e),
        ),
      );
      await new Promise((res) => setTimeout(res, 200)); // a stream of about 5 runs/s
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      await Promise.all(starts);
      if (failures.length > 0) throw failures[0];
      return accepted;
    },
  };
};

const tickRuns = async (s: StartAll): Promise<number> =>
  ((await callApi(`${s.url}/api/v2`, 'GET', '/dag-runs?name=tick')).body.dagRuns as unknown[])
    .length;

describe('replicated start-all on PostgreSQL', () => {
  it('keeps one leader through kill -9 and SIGSTOP; cron fires each minute once', async () => {
    const a = await startInstance(1);
    const b = await startInstance(2);
    const first = await leaderOf([a, b]);
    const other = first === a ? b : a;
    expect(await roleOf(other)).toBe('follower');
    // a fire by the first leader, then it dies
    await expect.poll(async () => (await fires()).length, { timeout: 70_000 }).toBe(1);
    // killed once its run exists (a claim and its run are two writes: docs/decisions.md)
    await expect.poll(() => tickRuns(first)).toBe(1);
    const stream = streamRuns(() => [a, b]);
    await expect.poll(() => readLedger().length, LEADER_WAIT).toBeGreaterThan(3);
    first.proc.kill('SIGKILL');
    expect(await leaderOf([other])).toBe(other);
    await expect.poll(() => readLedger().length, LEADER_WAIT).toBeGreaterThan(6);
    const accepted = await stream.stop();
    // every accepted run reaches a final status (the killed one's runs: marked failed by the
    // new leader's recovery); none executed twice, and every succeeded one exactly once; and
    // every run executed is one the client was answered (a start whose answer the kill lost is
    // asked again with its key and answered its run, never made twice)
    const statuses = new Map<string, number>();
    for (const id of accepted)
      statuses.set(id, Number((await untilFinal(`${other.url}/api/v2`, 'job', id)).status));
    const ledger = readLedger();
    expect(new Set(ledger).size).toBe(ledger.length);
    const succeeded = accepted.filter((id) => statuses.get(id) === 4);
    expect(ledger.filter((id) => succeeded.includes(id)).sort()).toEqual([...succeeded].sort());
    expect(ledger.every((id) => accepted.includes(id))).toBe(true);
    const c = await startInstance(3);
    expect(await roleOf(c)).toBe('follower');
    // the next minute is fired by the new leader
    await expect.poll(async () => (await fires()).length, { timeout: 70_000 }).toBe(2);
    expect(pidOf((await fires())[1]?.by ?? '')).toBe(other.proc.pid);

    // freeze the leader across a minute boundary, past its lease: the follower takes over and
    // fires that minute; resumed, the frozen one's claim is refused by its stale token
    await untilSecondOfMinute(55);
    other.proc.kill('SIGSTOP');
    expect(await leaderOf([c])).toBe(c);
    await expect.poll(async () => (await fires()).length, { timeout: 70_000 }).toBe(3);
    other.proc.kill('SIGCONT');
    // resumed, it acts on nothing: its own clock tells it the lease ran out, so it steps down
    // before acting; were its cron to wake first, the claim's stale token is refused (counted)
    const fencedLine = /stepping down before it can expire|is stale/;
    await expect.poll(() => fencedLine.test(other.output()), LEADER_WAIT).toBe(true);
    await expect.poll(() => roleOf(other), LEADER_WAIT).toBe('follower');
    const metrics = await fetch(`${other.url}/api/v2/metrics`).then((r) => r.text());
    expect(metrics).toMatch(/^svc_leader_fenced_writes_total \d+/m);
    expect(metrics).toMatch(/^svc_leader 0$/m);
    expect(metrics).toMatch(/^svc_database_pool_connections\{state="idle"\} \d+/m);

    const all = await fires();
    expect(pidOf(all[2]?.by ?? '')).toBe(c.proc.pid);
    // one fire per minute, consecutive: none missed, none doubled (the key forbids doubles)
    expect(all.map((f) => f.at - (all[0]?.at ?? 0))).toEqual([0, 60_000, 120_000]);
    // and one run per fire
    await expect.poll(() => tickRuns(c)).toBe(3);
  }, 300_000);
});
