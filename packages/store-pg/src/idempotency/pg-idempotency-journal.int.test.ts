import { describe, expect, it } from 'vitest';
import { AppError } from '@trellis/core';
import { IDEMPOTENCY_TTL_MS, IdempotentTriggers, fingerprintOf } from '@trellis/services';
import { FakeClock } from '@trellis/testkit';
import type { PgDb } from '../db/pg-db.js';
import { useMigratedPg } from '../../test/support/migrated-pg.js';
import { PgIdempotencyJournal } from './pg-idempotency-journal.js';

/** Two instances' pools on one migrated database. */
const pools = useMigratedPg({ pools: 2 });

/** Two instances (one pool each) on one database; a clock whose sleeps pass at once. */
const twoInstances = (pendingWait = { everyMs: 250, attempts: 10_000 }) => {
  const clock = new FakeClock('2026-01-02T03:04:05.000Z', { autoAdvance: true });
  const of = (db: PgDb) =>
    new IdempotentTriggers({ journal: new PgIdempotencyJournal({ db }), clock, pendingWait });
  let calls = 0;
  const start = () => Promise.resolve({ name: 'build', dagRunId: `run-${++calls}` });
  return { clock, a: of(pools.db(0)), b: of(pools.db(1)), start, calls: () => calls };
};
const req = (key: string, payload: unknown = { p: 1 }) => ({
  key,
  request: 'POST /dags/build/start',
  payload,
});
const codeOf = (e: unknown) => (AppError.is(e) ? e.code : e);

describe('PgIdempotencyJournal behind IdempotentTriggers on two instances', () => {
  it('starts one run for concurrent requests with one key, and refuses another body', async () => {
    const { clock, a, b, calls } = twoInstances();
    // the trigger ends once the other request found the key pending and waits (or, were the
    // key not claimed across instances, once the other request runs the trigger too)
    let secondCall = (): void => undefined;
    const released = Promise.race([
      clock.nextSleep(),
      new Promise<void>((resolve) => (secondCall = resolve)),
    ]);
    let n = 0;
    const trigger = async () => {
      if (++n > 1) secondCall();
      const id = `run-${n}`;
      await released;
      return { name: 'build', dagRunId: id };
    };
    const [x, y] = await Promise.all([a.run(req('k1'), trigger), b.run(req('k1'), trigger)]);
    expect(n).toBe(1);
    expect(x.dagRunId).toBe('run-1');
    expect(y.dagRunId).toBe('run-1');
    expect([x.replayed, y.replayed].sort()).toEqual([false, true]);
    const refused = await b.run(req('k1', { p: 2 }), trigger).catch((e: unknown) => e);
    expect(codeOf(refused)).toBe('already_exists');
    expect((refused as Error).message).toContain('"k1"');
    expect(calls()).toBe(0);
  });

  it('waits a bounded time for a pending key, and takes it over once its owner died', async () => {
    const { clock, b, start, calls } = twoInstances();
    const journal = new PgIdempotencyJournal({ db: pools.db(0) });
    const claim = {
      key: 'k2',
      fingerprint: fingerprintOf(req('k2').request, req('k2').payload),
      request: req('k2').request,
      nowMs: clock.now().getTime(),
      ttlMs: IDEMPOTENCY_TTL_MS,
    };
    // instance A claims the key, then dies before it fills in its run
    const dead = await journal.claim(claim);
    expect(dead.state).toBe('claimed');
    const impatient = twoInstances({ everyMs: 250, attempts: 2 }).b;
    const waited = await impatient.run(req('k2'), start).catch((e: unknown) => e);
    expect(codeOf(waited)).toBe('already_running');
    expect((waited as Error).message).toMatch(/"k2".*send the same request again/);
    const other = await b.run(req('k2', { p: 2 }), start).catch((e: unknown) => e);
    expect(codeOf(other)).toBe('already_exists');
    expect(calls()).toBe(0);
    // past the claim's bound: the next request takes the key over and starts the run
    await pools
      .db(0)
      .query(
        "UPDATE trellis_idempotency_keys SET pending_until = now() - interval '1 second' WHERE key = 'k2'",
      );
    expect(await b.run(req('k2'), start)).toMatchObject({ dagRunId: 'run-1', replayed: false });
    // the old owner, back, can neither fill nor release the key it lost
    if (dead.state !== 'claimed') throw new Error('unreachable');
    await dead.fill({ ...claim, name: 'build', dagRunId: 'zombie', createdAtMs: claim.nowMs });
    await dead.release();
    expect((await journal.get('k2'))?.dagRunId).toBe('run-1');
    expect(await b.run(req('k2'), start)).toEqual({ dagRunId: 'run-1', replayed: true });
  });

  it('frees the key of a failed trigger, and claims an expired key again', async () => {
    const { clock, a, b, start } = twoInstances();
    const failed = a.run(req('k3'), () => Promise.reject(new Error('refused')));
    await expect(failed).rejects.toThrow('refused');
    expect(await b.run(req('k3'), start)).toMatchObject({ dagRunId: 'run-1', replayed: false });
    await clock.advanceBy(IDEMPOTENCY_TTL_MS - 1);
    expect(await a.run(req('k3'), start)).toEqual({ dagRunId: 'run-1', replayed: true });
    await clock.advanceBy(1);
    expect(await a.run(req('k3', { p: 2 }), start)).toMatchObject({ dagRunId: 'run-2' });
  });

  it("hands a dead owner's run id to the request with its body that takes the key over", async () => {
    const { clock, b } = twoInstances();
    const journal = new PgIdempotencyJournal({ db: pools.db(0) });
    const claimOf = (payload: unknown) => ({
      key: 'k4',
      fingerprint: fingerprintOf(req('k4').request, payload),
      request: req('k4').request,
      nowMs: clock.now().getTime(),
      ttlMs: IDEMPOTENCY_TTL_MS,
    });
    // instance A claims the key, creates its run under the planned id, and dies before filling
    const dead = await journal.claim(claimOf({ p: 1 }));
    if (dead.state !== 'claimed' || dead.runId === undefined) throw new Error('no planned id');
    expect(dead.takenOver).toBe(false);
    const expire = () =>
      pools
        .db(0)
        .query(
          "UPDATE trellis_idempotency_keys SET pending_until = now() - interval '1 second' WHERE key = 'k4'",
        );
    await expire();
    // the same request, sent again, is told to create (or find) the run under that id
    const plans: unknown[] = [];
    const out = await b.run(req('k4'), (plan) => {
      plans.push(plan);
      return Promise.resolve({ name: 'build', dagRunId: dead.runId ?? '', adopted: true });
    });
    expect(plans).toEqual([{ dagRunId: dead.runId, adopt: true }]);
    expect(out).toMatchObject({ dagRunId: dead.runId, replayed: true });
    expect((await journal.get('k4'))?.dagRunId).toBe(dead.runId);
    // another body taking over a dead claim gets an id of its own
    await pools.db(0).query("DELETE FROM trellis_idempotency_keys WHERE key = 'k4'");
    const gone = await journal.claim(claimOf({ p: 1 }));
    await expire();
    const other = await journal.claim(claimOf({ p: 2 }));
    if (gone.state !== 'claimed' || other.state !== 'claimed') throw new Error('not claimed');
    expect(other.runId).not.toBe(gone.runId);
    expect(other.takenOver).toBe(false);
  });

  it('plans no old run for a key a pre-008 instance re-claimed after it was filled', async () => {
    const { clock, b } = twoInstances();
    const journal = new PgIdempotencyJournal({ db: pools.db(0) });
    const fingerprint = fingerprintOf(req('k5').request, { p: 1 });
    const first = await journal.claim({
      ...{ key: 'k5', fingerprint, request: req('k5').request },
      ...{ nowMs: clock.now().getTime(), ttlMs: IDEMPOTENCY_TTL_MS },
    });
    if (first.state !== 'claimed' || first.runId === undefined) throw new Error('not claimed');
    const old = first.runId;
    const entry = { key: 'k5', fingerprint, request: req('k5').request, name: 'build' };
    await first.fill({ ...entry, dagRunId: old, createdAtMs: 0 });
    // an instance from before migration 008 re-claims the expired key (its claim, which names
    // no run_id) and dies pending; its claim expires
    await pools.db(0).query(
      `INSERT INTO trellis_idempotency_keys AS k
          (key, fingerprint, request, created_at_ms, claim, pending_until)
        VALUES ('k5', $1, $2, $3, 'pre-008', now() - interval '1 second')
        ON CONFLICT (key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint,
          request = EXCLUDED.request, name = NULL, dag_run_id = NULL,
          created_at_ms = EXCLUDED.created_at_ms, claim = EXCLUDED.claim,
          pending_until = EXCLUDED.pending_until`,
      [fingerprint, req('k5').request, clock.now().getTime()],
    );
    // the request taking that claim over creates a run of its own, not the day-old one
    const plans: unknown[] = [];
    const out = await b.run(req('k5'), (plan) => {
      plans.push(plan);
      return Promise.resolve({ name: 'build', dagRunId: 'new-run' });
    });
    expect(plans).toHaveLength(1);
    expect(plans[0]).toMatchObject({ adopt: false });
    expect(plans[0]).not.toMatchObject({ dagRunId: old });
    expect(out).toMatchObject({ dagRunId: 'new-run', replayed: false });
  });
});
