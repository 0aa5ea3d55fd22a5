import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgDb } from '@trellis/store-pg';
import { startPostgres, type PrivatePostgres } from '@trellis/testkit';
import { callApi, startAll, untilFinal, type StartAll } from './support/start-all.js';

/** The pool's connect timeout (`PgDbOptions.connectTimeoutMs`'s default). */
const CONNECT_TIMEOUT_MS = 5000;

let postgres: PrivatePostgres | undefined;
let db: PgDb | undefined;
let home: string | undefined;
let server: StartAll | undefined;
let base: string;
/** Ends the test's held transaction (a no-op before it is open and after): db.end() waits for it. */
let release: () => void = () => undefined;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'trellis-e2e-pg-frozen-'));
  postgres = await startPostgres();
  const databaseUrl = await postgres.createDatabase('trellis_frozen');
  db = new PgDb({ url: databaseUrl, poolSize: 2 });
  // one connection: while one store call holds it, the next ones wait in the pool's queue
  server = await startAll({
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    SVC_HOME: home,
    SVC_DATABASE_URL: databaseUrl,
    SVC_DATABASE_POOL_SIZE: '1',
  });
  base = `${server.url}/api/v2`;
});

afterAll(async () => {
  release();
  try {
    server?.proc.kill('SIGCONT');
    await server?.stop();
    await db?.end();
  } finally {
    await postgres?.stop();
    if (home !== undefined) rmSync(home, { recursive: true, force: true });
  }
}, 60_000);

/** What beforeAll set up (it throws when beforeAll failed). */
const setUp = (): { db: PgDb; server: StartAll; home: string } => {
  if (db === undefined || server === undefined || home === undefined)
    throw new Error('the test server did not start');
  return { db, server, home };
};

const call = (method: string, path: string, body?: unknown) => callApi(base, method, path, body);

/** True once a connection of the server waits for a lock in an insert into `trellis_logs`. */
const touchBlocked = async (): Promise<boolean> => {
  const r = await setUp().db.query(
    `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock'
       AND query LIKE 'INSERT INTO trellis_logs%'`,
  );
  return r.rowCount === 1;
};

describe('a start-all on PostgreSQL frozen while a step waits for a connection', () => {
  it('resumed, the step opens its logs and the run finishes (no pool timeout surfaced)', async () => {
    const { db, server, home } = setUp();
    const gate = join(home, 'gate');
    const spec = `steps:\n  - name: first\n    command: sh -c 'while [ ! -f ${gate} ]; do sleep 0.05; done'\n  - name: second\n    command: echo second\n    depends: [first]\n`;
    expect((await call('POST', '/dags', { name: 'frozen', spec })).status).toBe(201);
    const started = await call('POST', '/dags/frozen/start', {});
    expect(started.status).toBe(200);
    const id = started.body.dagRunId as string;
    await expect
      .poll(
        async () => {
          const run = (await call('GET', `/dag-runs/frozen/${id}`)).body.dagRunDetails as
            { nodes: { status: number }[] } | undefined;
          return run?.nodes.map((n) => n.status);
        },
        { timeout: 30_000 },
      )
      .toEqual([1, 0]);
    // the second step's logs, beside the first's, are held by this uncommitted transaction: the
    // server's insert of one waits for it on its one connection, the other in the pool's queue
    const firstOut = await db.query<{ path: string }>(
      "SELECT path FROM trellis_logs WHERE path LIKE '%/first.out'",
    );
    const dir = (firstOut.rows[0]?.path ?? '').slice(0, -'/first.out'.length);
    const released = new Promise<void>((r) => (release = r));
    let held: () => void = () => undefined;
    const holding = new Promise<void>((r) => (held = r));
    const tx = db.tx(async (q) => {
      for (const name of ['second.out', 'second.err'])
        await q.query('INSERT INTO trellis_logs (path, dir) VALUES ($1, $2)', [
          `${dir}/${name}`,
          dir,
        ]);
      held();
      await released;
    });
    await holding;
    writeFileSync(gate, '');
    await expect.poll(touchBlocked, { timeout: 30_000 }).toBe(true);

    // frozen longer than the pool's connect timeout (the fault's length, not a wait for an event)
    server.proc.kill('SIGSTOP');
    release();
    await tx;
    await new Promise((r) => setTimeout(r, CONNECT_TIMEOUT_MS + 2000));
    server.proc.kill('SIGCONT');

    const run = await untilFinal(base, 'frozen', id, { context: () => server.output() });
    const errors = [run.error, ...(run.nodes as { error?: string }[]).map((n) => n.error)];
    expect(errors.join(' '), server.output()).not.toMatch(/internal error|unavailable/);
    expect(run).toMatchObject({ status: 4 });
    expect((run.nodes as { status: number }[]).map((n) => n.status)).toEqual([4, 4]);
  }, 120_000);
});
