import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgDb } from '@trellis/store-pg';
import { startPostgres, type PrivatePostgres } from '@trellis/testkit';
import { openSse } from '../integration/support/sse-client.js';
import { callApi, startAll, untilFinal, type StartAll } from './support/start-all.js';

let postgres: PrivatePostgres;
let databaseUrl: string;
let home: string;
let server: StartAll | undefined;

const envOf = (): NodeJS.ProcessEnv => ({
  PATH: '/usr/local/bin:/usr/bin:/bin',
  HOME: home,
  SVC_HOME: home,
  SVC_DATABASE_URL: databaseUrl,
});

beforeAll(async () => {
  postgres = await startPostgres();
  databaseUrl = await postgres.createDatabase('trellis_e2e');
  home = mkdtempSync(join(tmpdir(), 'trellis-e2e-pg-'));
});

afterAll(async () => {
  await server?.stop();
  await postgres.stop();
  rmSync(home, { recursive: true, force: true });
});

const api = (s: StartAll) => (method: string, path: string, body?: unknown) =>
  callApi(`${s.url}/api/v2`, method, path, body);

/** Rows the database holds for the runs (read beside Trellis, not through it). */
const runRowsInDatabase = async (): Promise<number> => {
  const db = new PgDb({ url: databaseUrl, poolSize: 1 });
  try {
    const r = await db.query<{ n: string }>('SELECT count(*) AS n FROM trellis_runs');
    return Number(r.rows[0]?.n);
  } finally {
    await db.end();
  }
};

/** Run folders the file store would have made under `SVC_HOME/data/runs`. */
const runFilesUnderHome = (): string[] => {
  const dir = join(home, 'data', 'runs');
  return existsSync(dir) ? readdirSync(dir, { recursive: true }).map(String) : [];
};

const LINES = 30;
const SPEC = `steps:\n  - name: count\n    command: seq 1 ${LINES}\n  - name: after\n    command: echo done\n    depends: [count]\n`;

describe('trellis start-all on PostgreSQL (SVC_DATABASE_URL)', () => {
  const ids: string[] = [];

  it('runs DAGs into the database and serves them, their logs and windows of them', async () => {
    server = await startAll(envOf());
    const call = api(server);
    expect((await call('POST', '/dags', { name: 'counter', spec: SPEC })).status).toBe(201);
    for (let i = 0; i < 3; i++) {
      const started = await call('POST', '/dags/counter/start', {});
      expect(started.status).toBe(200);
      ids.push(started.body.dagRunId as string);
    }
    for (const id of ids) {
      const run = await untilFinal(`${server.url}/api/v2`, 'counter', id, {
        context: () => server?.output() ?? '',
      });
      expect(run).toMatchObject({ status: 4 });
    }
    const list = await call('GET', '/dag-runs?name=counter');
    expect(list.status).toBe(200);
    const listed = (list.body.dagRuns as { dagRunId: string }[]).map((r) => r.dagRunId);
    expect([...listed].sort()).toEqual([...ids].sort());

    const id = ids[0] as string;
    const full = await call('GET', `/dag-runs/counter/${id}/steps/count/log`);
    expect(full.body).toMatchObject({ lineCount: LINES, totalLines: LINES });
    const tail = await call('GET', `/dag-runs/counter/${id}/steps/count/log?tail=3`);
    expect(tail.body).toMatchObject({ content: '28\n29\n30', lineCount: 3, totalLines: LINES });
    const head = await call('GET', `/dag-runs/counter/${id}/steps/count/log?head=2`);
    expect(head.body).toMatchObject({ content: '1\n2', lineCount: 2 });
    const window = await call('GET', `/dag-runs/counter/${id}/steps/count/log?offset=10&limit=2`);
    expect(window.body).toMatchObject({ content: '10\n11', lineCount: 2 });
    const runLog = await call('GET', `/dag-runs/counter/${id}/log`);
    expect(runLog.status).toBe(200);
    expect(String(runLog.body.content)).toContain('count');

    const follow = await openSse(
      `${server.url}/api/v2/dag-runs/counter/${id}/steps/count/log/stream?offset=25`,
    );
    await follow.next((e) => e.event === 'end');
    const followed = follow.events
      .filter((e) => e.event === 'log')
      .map((e) => (JSON.parse(e.data) as { content: string }).content)
      .join('\n');
    follow.close();
    expect(followed).toBe('25\n26\n27\n28\n29\n30');

    expect(await runRowsInDatabase()).toBe(3);
    expect(runFilesUnderHome()).toEqual([]);
  });

  it('finds every run and log again after a restart of start-all', async () => {
    expect(await server?.stop()).toBe(0);
    server = await startAll(envOf());
    const call = api(server);
    const list = await call('GET', '/dag-runs?name=counter');
    const listed = (list.body.dagRuns as { dagRunId: string; status: number }[]).map(
      (r) => `${r.dagRunId}:${r.status}`,
    );
    expect([...listed].sort()).toEqual(ids.map((id) => `${id}:4`).sort());
    for (const id of ids) {
      const log = await call('GET', `/dag-runs/counter/${id}/steps/after/log`);
      expect(log.body).toMatchObject({ content: 'done', lineCount: 1 });
    }
    expect(runFilesUnderHome()).toEqual([]);
  });
});
