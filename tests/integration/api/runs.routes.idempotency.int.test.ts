import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { runRoutes } from '@trellis/api';
import { IDEMPOTENCY_TTL_MS } from '@trellis/services';
import { FakeClock } from '@trellis/testkit';
import { apiHarness, type ApiHarness } from '../support/api-harness.js';
import { expectError } from '../support/expect-error.js';
import { createTempHome, type TempHome } from '../support/local-run-service.js';

/** Idempotency-Key on start and enqueue (docs/api.md, "Idempotent triggers"). */
let home: TempHome | undefined;
afterEach(() => {
  home?.cleanup();
  home = undefined;
});

const serverOn = (opts: { clock?: FakeClock } = {}): ApiHarness => {
  home ??= createTempHome('trellis-idem-');
  const h = apiHarness([runRoutes], {
    home,
    ...(opts.clock ? { idempotencyClock: opts.clock } : {}),
  });
  h.dag('build', 'maxActiveRuns: -1\nparams: REF=main\nsteps:\n  - "true"\n');
  return h;
};

const start = (h: ApiHarness, key: string, body: object = {}, verb = 'start') =>
  request(h.app).post(`/api/v2/dags/build/${verb}`).set('Idempotency-Key', key).send(body);

const runIdOf = (res: request.Response): string => {
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body as { dagRunId: string }).dagRunId;
};
const runsOf = async (h: ApiHarness) => (await h.store.listRuns({ name: 'build' })).length;

describe('idempotent triggers', () => {
  it('answers the same run for the same key and body, saying it is a replay', async () => {
    const h = serverOn();
    const first = await start(h, 'ci-123', { params: 'REF=v1' });
    const id = runIdOf(first);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    // the same body with its fields in another order is the same request
    const again = await start(h, 'ci-123', { params: 'REF=v1' });
    expect(runIdOf(again)).toBe(id);
    expect(again.headers['idempotent-replayed']).toBe('true');
    await h.finished('build', id);
    expect(runIdOf(await start(h, 'ci-123', { params: 'REF=v1' }))).toBe(id);
    expect(await runsOf(h)).toBe(1);
  });

  it('refuses the key with another body or on another route, naming the key and the fix', async () => {
    const h = serverOn();
    const id = runIdOf(await start(h, 'deploy-7', { params: 'REF=v1' }));
    const other = await start(h, 'deploy-7', { params: 'REF=v2' });
    expectError(other, 409, 'already_exists', /Idempotency-Key "deploy-7".*another request/);
    expect((other.body as { message: string }).message).toContain(`run ${id}`);
    expect((other.body as { message: string }).message).toMatch(/exact body.*or use a new key/);
    expectError(
      await start(h, 'deploy-7', { params: 'REF=v1' }, 'enqueue'),
      409,
      'already_exists',
      /POST \/dags\/build\/start/,
    );
    expect(await runsOf(h)).toBe(1);
    await h.finished('build', id);
  });

  it('makes enqueue idempotent too', async () => {
    const h = serverOn();
    const id = runIdOf(await start(h, 'q-1', { queue: 'nightly' }, 'enqueue'));
    expect(runIdOf(await start(h, 'q-1', { queue: 'nightly' }, 'enqueue'))).toBe(id);
    expect(await runsOf(h)).toBe(1);
  });

  it('starts exactly one run for 20 concurrent requests with one key', async () => {
    const h = serverOn();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => start(h, 'burst', { params: 'REF=v3' })),
    );
    const ids = new Set(answers.map(runIdOf));
    expect(ids.size).toBe(1);
    expect(answers.filter((a) => a.headers['idempotent-replayed'] === 'true')).toHaveLength(19);
    expect(await runsOf(h)).toBe(1);
    await h.finished('build', [...ids][0] ?? '');
  });

  it('keeps keys across a restart of the server on the same home', async () => {
    const before = serverOn();
    const id = runIdOf(await start(before, 'restart-1', { params: 'REF=v4' }));
    await before.finished('build', id);
    const after = serverOn();
    const again = await start(after, 'restart-1', { params: 'REF=v4' });
    expect(runIdOf(again)).toBe(id);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await runsOf(after)).toBe(1);
  });

  it('forgets a key 24 h after its run was created', async () => {
    const clock = new FakeClock('2026-03-01T00:00:00.000Z');
    const h = serverOn({ clock });
    const id = runIdOf(await start(h, 'daily', { params: 'REF=v5' }));
    await h.finished('build', id);
    await clock.advanceBy(IDEMPOTENCY_TTL_MS - 1);
    expect(runIdOf(await start(h, 'daily', { params: 'REF=v5' }))).toBe(id);
    await clock.advanceBy(1);
    const fresh = runIdOf(await start(h, 'daily', { params: 'REF=v6' }));
    expect(fresh).not.toBe(id);
    expect(await runsOf(h)).toBe(2);
    await h.finished('build', fresh);
  });

  it('answers 400 for a key that is too long, empty or not printable, and starts nothing', async () => {
    const h = serverOn();
    for (const key of ['k'.repeat(256), '', 'tab\there']) {
      expectError(
        await start(h, key),
        400,
        'bad_request',
        /Idempotency-Key: .* is not an idempotency key: use 1 to 255 printable ASCII characters/,
      );
    }
    expect(runIdOf(await start(h, 'k'.repeat(255)))).not.toBe('');
    expect(await runsOf(h)).toBe(1);
  });
});
