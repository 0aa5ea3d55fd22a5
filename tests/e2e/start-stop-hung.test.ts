import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MIGRATION_LOCK_KEY, PgDb } from '@trellis/store-pg';
import { startPostgres, type PrivatePostgres } from '@trellis/testkit';
import { BIN } from './support/start-all.js';

/**
 * A stop signal while start-up is stuck (here: the migrations' advisory lock held by another
 * session, as an instance that hangs mid-migration would) ends the process within the bound
 * (`STARTUP_STOP_MS`, packages/cli/src/wiring/serve.ts), saying why, instead of waiting for ever.
 */

let postgres: PrivatePostgres;
let databaseUrl: string;
let home: string;

beforeAll(async () => {
  postgres = await startPostgres();
  databaseUrl = await postgres.createDatabase('trellis_hung');
  home = mkdtempSync(join(tmpdir(), 'trellis-e2e-hung-'));
}, 60_000);

afterAll(async () => {
  await postgres.stop();
  rmSync(home, { recursive: true, force: true });
});

it('exits 1 naming the cause when SIGTERM comes while start-up waits on the database', async () => {
  const db = new PgDb({ url: databaseUrl, poolSize: 2 });
  let release = (): void => undefined;
  const held = new Promise<void>((r) => (release = r));
  const locked = db.tx(async (q) => {
    await q.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    await held;
  });
  try {
    const proc = spawn(process.execPath, [BIN, 'start-all', '--host', '127.0.0.1', '--port', '0'], {
      env: {
        PATH: '/usr/local/bin:/usr/bin:/bin',
        HOME: home,
        SVC_HOME: home,
        SVC_DATABASE_URL: databaseUrl,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    proc.stdout.on('data', (c: Buffer) => (output += c.toString()));
    proc.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const exited = once(proc, 'exit');
    // start-up is stuck once its migration waits for the lock this test holds
    await expect
      .poll(
        async () =>
          (
            await db.query<{ n: string }>(
              `SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`,
            )
          ).rows[0]!.n,
        { timeout: 30_000, interval: 100 },
      )
      .toBe('1');
    proc.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    expect(code, output).toBe(1);
    expect(output).toMatch(/start-up did not finish within 10s of the stop signal/);
  } finally {
    release();
    await locked;
    await db.end();
  }
}, 60_000);
