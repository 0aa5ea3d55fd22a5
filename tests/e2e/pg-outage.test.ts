import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, type PrivatePostgres } from '@trellis/testkit';
import { callApi, startAll, untilFinal, type StartAll } from './support/start-all.js';

let postgres: PrivatePostgres;
let home: string;
let server: StartAll;
let base: string;

beforeAll(async () => {
  postgres = await startPostgres();
  const databaseUrl = await postgres.createDatabase('trellis_outage');
  home = mkdtempSync(join(tmpdir(), 'trellis-e2e-pg-outage-'));
  server = await startAll({
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    SVC_HOME: home,
    SVC_DATABASE_URL: databaseUrl,
  });
  base = `${server.url}/api/v2`;
});

afterAll(async () => {
  await server.stop();
  await postgres.stop();
  rmSync(home, { recursive: true, force: true });
});

const call = (method: string, path: string, body?: unknown) => callApi(base, method, path, body);

/** A run's status over the API (undefined while it cannot be read). */
const statusOf = async (name: string, id: string): Promise<number | undefined> =>
  ((await call('GET', `/dag-runs/${name}/${id}`)).body.dagRunDetails as { status: number })?.status;

const expectUnavailable = (r: { status: number; body: Record<string, unknown> }): void => {
  expect(r.status).toBe(503);
  expect(r.body).toMatchObject({ code: 'service_unavailable' });
  expect(String(r.body.message)).toContain('SVC_DATABASE_URL');
};

describe('PostgreSQL restarted under a running start-all', () => {
  it('answers 503 service_unavailable while it is away, recovers, and finishes the run in flight', async () => {
    const gate = join(home, 'gate');
    const spec = `steps:\n  - name: before\n    command: echo before\n  - name: wait\n    command: sh -c 'while [ ! -f ${gate} ]; do sleep 0.05; done; echo after'\n    depends: [before]\n`;
    expect((await call('POST', '/dags', { name: 'gated', spec })).status).toBe(201);
    const started = await call('POST', '/dags/gated/start', {});
    expect(started.status).toBe(200);
    const id = started.body.dagRunId as string;
    // the gated step runs: the run's record says so
    await expect
      .poll(async () => {
        const run = (await call('GET', `/dag-runs/gated/${id}`)).body.dagRunDetails as
          { nodes: { status: number }[] } | undefined;
        return run?.nodes.map((n) => n.status);
      })
      .toEqual([4, 1]);

    await postgres.pause();
    expectUnavailable(await call('GET', '/dag-runs'));
    expectUnavailable(await call('GET', `/dag-runs/gated/${id}`));
    expectUnavailable(await call('GET', `/dag-runs/gated/${id}/steps/before/log`));
    expectUnavailable(await call('POST', '/dags/gated/start', {}));
    // the step ends while the database is away: its output and transition wait for it
    writeFileSync(gate, '');
    await server.waitFor('wait.out waits for the database');
    expectUnavailable(await call('GET', '/dag-runs'));

    await postgres.resume();
    const run = await untilFinal(base, 'gated', id, { context: () => server.output() });
    expect(run).toMatchObject({ status: 4 });
    expect((run.nodes as { status: number }[]).map((n) => n.status)).toEqual([4, 4]);
    const log = await call('GET', `/dag-runs/gated/${id}/steps/before/log`);
    expect(log.body).toMatchObject({ content: 'before' });
    // the start refused while it was away made no run; new runs start again
    const list = await call('GET', '/dag-runs?name=gated');
    expect((list.body.dagRuns as { dagRunId: string }[]).map((r) => r.dagRunId)).toEqual([id]);
    const again = await call('POST', '/dags/gated/start', {});
    expect(again.status).toBe(200);
    const againId = again.body.dagRunId as string;
    expect((await untilFinal(base, 'gated', againId)).status).toBe(4);
    expect(await statusOf('gated', id)).toBe(4);
    expect(server.output()).not.toMatch(/internal_error|Unhandled/);
  });
});
