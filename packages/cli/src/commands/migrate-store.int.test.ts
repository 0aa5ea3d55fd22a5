import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliIn } from '../../test/support/cli-in.js';

// The copy itself runs against a private PostgreSQL in tests/e2e/migrate-store.test.ts; these
// are the refusals, which need no database.
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-migrate-store-cli-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cli = async (args: string[], env: Record<string, string> = {}) => {
  const r = await cliIn(dir, args, env);
  return { code: r.code, out: r.out.join('\n'), err: r.err.join('\n') };
};

describe('trellis migrate store', () => {
  it('names a malformed --database-url and the form to use', async () => {
    const r = await cli(['migrate', 'store', '--to', 'postgres', '--database-url', 'mysql://x']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('invalid --database-url "mysql://x": use a postgres:// URL');
  });

  it('says the database is unavailable when it cannot be reached', async () => {
    const r = await cli(['migrate', 'store', '--to', 'postgres'], {
      SVC_DATABASE_URL: 'postgres://postgres@127.0.0.1:1/postgres',
    });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/PostgreSQL store is unavailable.*SVC_DATABASE_URL/);
  });

  it('asks for a direction, an --out for the export, and a database', async () => {
    expect((await cli(['migrate', 'store'])).err).toContain('say where to: --to postgres');
    const noOut = await cli(['migrate', 'store', '--from', 'postgres']);
    expect(noOut.code).toBe(2);
    expect(noOut.err).toContain('--to files needs --out <dir>');
    const noDb = await cli(['migrate', 'store', '--to', 'postgres']);
    expect(noDb.code).toBe(2);
    expect(noDb.err).toContain('give --database-url postgres://... or set SVC_DATABASE_URL');
    expect((await cli(['migrate', 'store', '--to', 'mysql'])).err).toContain(
      'unknown --to "mysql"',
    );
  });

  it('shows its usage and examples with --help, beside migrate history which still works', async () => {
    const help = await cli(['migrate', 'store', '--help']);
    expect(help.code).toBe(0);
    expect(help.out).toContain('trellis migrate store --to files --out /backup/trellis-home');
    const history = await cli(['migrate', 'history', '--dry-run']);
    expect(history.code).toBe(0);
    expect(history.out).toContain('no 1.16 run history');
  });
});
