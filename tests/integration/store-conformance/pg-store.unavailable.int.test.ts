import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRoutes } from '@trellis/api';
import { AppError, systemClock } from '@trellis/core';
import { openPgStore, type PgRunStore } from '@trellis/store-pg';
import { startPostgres, type PrivatePostgres } from '@trellis/testkit';
import { apiHarness, type ApiHarness } from '../support/api-harness.js';
import { makeRecord } from '@trellis/testkit';

let pg: PrivatePostgres;
let close: () => Promise<void>;
let store: PgRunStore;
let h: ApiHarness;

beforeAll(async () => {
  pg = await startPostgres();
  ({ close, store } = await openPgStore({
    url: pg.url,
    poolSize: 2,
    logDir: '/var/trellis/logs',
    clock: systemClock,
  }));
  await store.createRun(makeRecord(), { dag: {}, localDags: [] });
  h = apiHarness([runRoutes], { reads: store });
});
afterAll(async () => {
  h.cleanup();
  await close();
  await pg.stop();
});

const codeOf = (p: Promise<unknown>): Promise<string | undefined> =>
  p.then(
    () => undefined,
    (e: unknown) => (AppError.is(e) ? e.code : String(e)),
  );

describe('PostgreSQL stopped mid-use', () => {
  it('fails store calls as service_unavailable (API 503) and recovers when it returns, without a restart', async () => {
    const list = () => request(h.app).get('/api/v2/dag-runs');
    const before = await list();
    expect(before.status).toBe(200);
    expect(JSON.stringify(before.body)).toContain('run-0001');

    await pg.pause();
    expect(await codeOf(store.getRun({ name: 'etl', dagRunId: 'run-0001' }))).toBe(
      'service_unavailable',
    );
    expect(await codeOf(store.saveRun({ ...makeRecord(), revision: 1 }))).toBe(
      'service_unavailable',
    );
    const away = await list();
    expect(away.status).toBe(503);
    expect(away.body).toMatchObject({ code: 'service_unavailable' });
    expect(String(away.body.message)).toContain('SVC_DATABASE_URL');

    await pg.resume();
    const after = await list();
    expect(after.status).toBe(200);
    expect(JSON.stringify(after.body)).toContain('run-0001');
    await store.saveRun({ ...makeRecord(), revision: 1, error: 'saved after the return' });
    expect((await store.getRun({ name: 'etl', dagRunId: 'run-0001' })).error).toBe(
      'saved after the return',
    );
  });
});
