import { describe, expect, it } from 'vitest';
import { createHealthProbe, healthAnswer } from './health.js';

const fine = (): Promise<string | undefined> => Promise.resolve(undefined);
const PROBLEM = 'data directory /data is not writable (EACCES: permission denied)';
const broken = (): Promise<string | undefined> => Promise.resolve(PROBLEM);

describe('createHealthProbe', () => {
  it('is healthy with a store without problems and a live scheduler', async () => {
    expect(await createHealthProbe({ storeProblem: fine, schedulerAlive: () => true })()).toEqual(
      {},
    );
  });

  it('is healthy without a scheduler to ask', async () => {
    expect(await createHealthProbe({ storeProblem: fine })()).toEqual({});
  });

  it("names the store's problem, also when its check throws", async () => {
    expect(await createHealthProbe({ storeProblem: broken })()).toEqual({ error: PROBLEM });
    const throwing = () => Promise.reject(new Error('disk gone'));
    expect((await createHealthProbe({ storeProblem: throwing })()).error).toBe('Error: disk gone');
  });

  it('names the scheduler when it does not answer, or its check throws', async () => {
    expect(await createHealthProbe({ storeProblem: fine, schedulerAlive: () => false })()).toEqual({
      error: 'the scheduler is not responding',
    });
    const throwing = () => {
      throw new Error('gone');
    };
    expect(
      (await createHealthProbe({ storeProblem: fine, schedulerAlive: throwing })()).error,
    ).toBe('the scheduler is not responding');
  });

  it('reports both failures together', async () => {
    const verdict = await createHealthProbe({
      storeProblem: broken,
      schedulerAlive: () => false,
    })();
    expect(verdict.error).toBe(`${PROBLEM}; the scheduler is not responding`);
  });

  it('says leader (with the lease age) or follower with replicated coordinators', async () => {
    const leader = createHealthProbe({
      storeProblem: fine,
      leadership: () => ({ leader: true, leaseAgeMs: 1500 }),
    });
    expect(await leader()).toEqual({ role: 'leader', leaseAgeSeconds: 1.5 });
    const follower = createHealthProbe({
      storeProblem: broken,
      leadership: () => ({ leader: false }),
    });
    expect(await follower()).toEqual({ error: PROBLEM, role: 'follower' });
  });

  it("reports the PostgreSQL store's latency and pool beside the verdict", async () => {
    const facts = { latencyMs: 1.25, pool: { size: 10, inUse: 2, idle: 3, waiting: 0 } };
    const probe = createHealthProbe({
      storeProblem: broken,
      database: () => Promise.resolve(facts),
    });
    expect(await probe()).toEqual({ error: PROBLEM, database: facts });
  });

  it('reports no latency and an empty pool when the database check throws', async () => {
    const probe = createHealthProbe({
      storeProblem: fine,
      database: () => Promise.reject(new Error('pool ended')),
    });
    expect(await probe()).toEqual({
      database: { latencyMs: null, pool: { size: 0, inUse: 0, idle: 0, waiting: 0 } },
    });
  });
});

describe('healthAnswer', () => {
  const startedAt = new Date('2026-01-01T00:00:00.000Z');
  const now = new Date('2026-01-01T00:01:01.900Z');

  it('is 200 healthy with the version, whole seconds of uptime and the time', () => {
    expect(healthAnswer({}, '1.2.3', startedAt, now)).toEqual({
      status: 200,
      body: { status: 'healthy', version: '1.2.3', uptime: 61, timestamp: now.toISOString() },
    });
  });

  it("is 503 unhealthy naming the verdict's error, with the role and lease age beside", () => {
    const a = healthAnswer(
      { error: PROBLEM, role: 'leader', leaseAgeSeconds: 0.5 },
      '1.2.3',
      startedAt,
      now,
    );
    expect(a.status).toBe(503);
    expect(a.body).toMatchObject({ status: 'unhealthy', error: PROBLEM, role: 'leader' });
    expect(a.body.leaseAgeSeconds).toBe(0.5);
  });

  it("carries the database's facts into the body", () => {
    const database = { latencyMs: null, pool: { size: 4, inUse: 4, idle: 0, waiting: 2 } };
    expect(healthAnswer({ database }, 'v', startedAt, now).body.database).toEqual(database);
  });

  it('never reports a negative uptime (a clock stepped back)', () => {
    expect(healthAnswer({}, 'v', now, startedAt).body.uptime).toBe(0);
  });
});
