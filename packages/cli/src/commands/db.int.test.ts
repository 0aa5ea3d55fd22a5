import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, type PrivatePostgres } from '@trellis/testkit';
import { cliIn } from '../../test/support/cli-in.js';

let pg: PrivatePostgres;
let dir: string;
beforeAll(async () => {
  pg = await startPostgres();
  dir = mkdtempSync(join(tmpdir(), 'trellis-db-cli-'));
});
afterAll(async () => {
  await pg.stop();
  rmSync(dir, { recursive: true, force: true });
});

const cli = async (args: string[], env: Record<string, string> = {}) => {
  const r = await cliIn(dir, args, env);
  return { code: r.code, out: r.out.join('\n'), err: r.err.join('\n') };
};

describe('trellis db', () => {
  it('lists pending migrations, applies them once, then reports the database up to date', async () => {
    const env = { SVC_DATABASE_URL: pg.url, SVC_DATABASE_POOL_SIZE: '3' };
    const before = await cli(['db', 'status'], env);
    expect(before).toMatchObject({ code: 0 });
    expect(before.out).toMatch(/^001 runs_logs_leases {2}pending$/m);
    expect(before.out).toContain('pending: run trellis db migrate');
    const applied = await cli(['db', 'migrate'], env);
    expect(applied).toMatchObject({ code: 0 });
    expect(applied.out).toMatch(/^applied \d+ migration\(s\): 1/);
    expect((await cli(['db', 'migrate'], env)).out).toContain('up to date');
    const after = await cli(['db', 'status'], env);
    expect(after.out).toMatch(/^001 runs_logs_leases {2}\d{4}-\d\d-\d\dT/m);
    expect(after.out).toContain('up to date');
  });

  it('says how to configure the database when none is set, and names a bad URL', async () => {
    const none = await cli(['db', 'migrate']);
    expect(none.code).toBe(2);
    expect(none.err).toContain('set SVC_DATABASE_URL');
    const bad = await cli(['db', 'status'], { SVC_DATABASE_URL: 'mysql://x' });
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('postgres://');
  });

  it('fails with the store unavailable when the server cannot be reached', async () => {
    const gone = await cli(['db', 'status'], {
      SVC_DATABASE_URL: 'postgres://postgres@127.0.0.1:1/postgres',
    });
    expect(gone.code).toBe(1);
    expect(gone.err).toContain('unavailable');
  });
});
