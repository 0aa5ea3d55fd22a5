import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { systemClock } from '@trellis/core';
import { FsRunStore } from '@trellis/store';
import type { PgDb } from '../db/pg-db.js';
import { useMigratedPg } from '../../test/support/migrated-pg.js';
import { copyFilesToPg } from './files-to-pg.js';
import { reportLines } from './move-report.js';
import { exportPgToFiles } from './pg-to-files.js';

const pools = useMigratedPg({ pools: 1, database: 'move_flags' });
let dir: string;
let db: PgDb;
beforeAll(() => {
  db = pools.db(0);
  dir = mkdtempSync(join(tmpdir(), 'trellis-move-flags-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const filesAt = (home: string): FsRunStore =>
  new FsRunStore({ dataDir: join(home, 'data'), logDir: join(home, 'logs'), clock: systemClock });

it('trellis migrate store copies the suspend flags both ways, idempotently', async () => {
  const home = join(dir, 'home');
  mkdirSync(join(home, 'data', 'suspend'), { recursive: true });
  for (const f of ['etl', 'nightly'])
    writeFileSync(join(home, 'data', 'suspend', `${f}.suspend`), '');
  const o = { files: filesAt(home), dataDir: join(home, 'data'), db, clock: systemClock };
  const first = await copyFilesToPg(o);
  expect(first.suspendFlags).toEqual({ added: 2, updated: 0, already: 0 });
  expect(reportLines(first)).toContain('suspend flags: 2 added, 0 already there');
  expect((await copyFilesToPg(o)).suspendFlags).toEqual({ added: 0, updated: 0, already: 2 });
  const rows = await db.query<{ file_name: string }>(
    'SELECT file_name FROM trellis_dag_suspend_flags ORDER BY file_name',
  );
  expect(rows.rows.map((r) => r.file_name)).toEqual(['etl', 'nightly']);

  const out = join(dir, 'export');
  const back = { db, files: filesAt(out), logDir: join(out, 'logs') };
  expect((await exportPgToFiles(back)).suspendFlags).toEqual({ added: 2, updated: 0, already: 0 });
  expect(readdirSync(join(out, 'data', 'suspend')).sort()).toEqual([
    'etl.suspend',
    'nightly.suspend',
  ]);
  expect((await exportPgToFiles(back)).suspendFlags).toEqual({ added: 0, updated: 0, already: 2 });
});
