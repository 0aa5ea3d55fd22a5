import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '@trellis/core';
import type { DagRunRecord } from '@trellis/spec';
import { FsRunStore } from '@trellis/store';
import { PgDb, PgRunStore } from '@trellis/store-pg';
import { startPostgres, type PrivatePostgres } from '@trellis/testkit';
import { makeFileHome, type FileHome } from './support/file-home.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const bin = join(root, 'packages', 'cli', 'bin', 'trellis.js');
const RUNS = 5000;
/** Bounds against hangs (5,000 runs on two shared cores), not performance assertions. */
const LONG = 600_000;

let pg: PrivatePostgres;
let dir: string;
let home: FileHome;
const pools: PgDb[] = [];

beforeAll(async () => {
  pg = await startPostgres();
  dir = mkdtempSync(join(tmpdir(), 'trellis-e2e-move-'));
  home = await makeFileHome(join(dir, 'home'), RUNS);
}, LONG);
afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
  await pg?.stop();
  rmSync(dir, { recursive: true, force: true });
}, LONG);

/** `trellis migrate store ...` as its own process; `onErr` sees stderr as it comes. */
const start = (args: string[], url: string, onErr?: (text: string) => void) => {
  const child = spawn(process.execPath, [bin, 'migrate', 'store', ...args], {
    cwd: dir,
    env: { PATH: '/usr/bin:/bin', HOME: dir, SVC_HOME: join(dir, 'home'), SVC_DATABASE_URL: url },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => {
    err += c.toString();
    onErr?.(err);
  });
  const done = once(child, 'exit').then(([code]) => ({ code: code as number, out, err }));
  return { child, done };
};
const migrate = (args: string[], url: string) => start(args, url).done;

const pgStore = (url: string): PgRunStore => {
  const db = new PgDb({ url, poolSize: 2 });
  pools.push(db);
  return new PgRunStore({ db, logDir: home.logDir, clock: systemClock });
};

/** Every 97th run and its child, with what the file home has for it. */
const sample = async (): Promise<DagRunRecord[]> => {
  const all = await home.store.listRuns({ includeChildren: true });
  const picked = all.filter((_, i) => i % 97 === 0);
  return Promise.all(
    picked.map((s) => home.store.getRun(s, s.parent === undefined ? {} : { root: s.root })),
  );
};

/** A digest of a database's runs and logs, to tell two copies equal. */
const digest = async (url: string): Promise<unknown> => {
  const db = new PgDb({ url, poolSize: 1 });
  try {
    const runs = await db.query(
      `SELECT count(*) AS n, md5(string_agg(name || '/' || dag_run_id || ':' || revision || record::text
       || snapshot::text, ',' ORDER BY root_name, root_run_id, name, dag_run_id)) AS h FROM trellis_runs`,
    );
    const logs = await db.query(
      `SELECT count(*) AS n, sum(total_lines) AS lines, md5(string_agg(l.path || ':' || l.total_lines
       || ':' || l.partial || ':' || (SELECT md5(string_agg(content, E'\\n' ORDER BY line_no))
       FROM trellis_log_lines WHERE log_id = l.id), ',' ORDER BY l.path)) AS h FROM trellis_logs l`,
    );
    return { runs: runs.rows[0], logs: logs.rows[0] };
  } finally {
    await db.end();
  }
};

const total = (): number => RUNS + home.children;

describe(`trellis migrate store, a home of ${RUNS} runs`, () => {
  let first: string;

  it(
    'copies runs, child runs, queued runs and logs, counted; the PostgreSQL store reads them back equal',
    async () => {
      first = await pg.createDatabase('moved');
      const r = await migrate(['--to', 'postgres'], first);
      expect(r.err).not.toContain('failed');
      expect(r.code).toBe(0);
      expect(r.out).toContain(`runs: ${RUNS} added, 0 updated, 0 already there`);
      expect(r.out).toContain(`child runs: ${home.children} added, 0 updated, 0 already there`);
      expect(r.out).toContain(`queued runs (the queue ledger) copied: ${home.queued}`);
      expect(r.out).toContain(`logs: ${home.logs} added, 0 updated, 0 already there`);
      const store = pgStore(first);
      expect(await store.listRuns({ includeChildren: true })).toHaveLength(total());
      expect(await store.listRuns({ status: 5 })).toHaveLength(home.queued);
      expect(await store.listRuns({ name: 'dag-3' })).toEqual(
        await home.store.listRuns({ name: 'dag-3' }),
      );
      for (const rec of await sample()) {
        const opts = rec.parent === undefined ? {} : { root: rec.root };
        expect(await store.getRun(rec, opts)).toEqual(rec);
        expect(await store.getSnapshot(rec, opts)).toEqual(await home.store.getSnapshot(rec, opts));
        if (rec.parent === undefined)
          expect(await store.listChildren(rec)).toEqual(await home.store.listChildren(rec));
        for (const path of [rec.log, ...rec.nodes.flatMap((n) => [n.stdout, n.stderr])])
          for (const q of [{ tail: 5 }, { head: 3 }, { offset: 2, limit: 1000 }]) {
            const [a, b] = await Promise.all([store.readLog(path, q), home.store.readLog(path, q)]);
            expect({ path, ...a, isEstimate: false }).toEqual({ path, ...b, isEstimate: false });
          }
      }
    },
    LONG,
  );

  it(
    'copies nothing the second time and counts everything as already there',
    async () => {
      const r = await migrate(['--to', 'postgres'], first);
      expect(r.code).toBe(0);
      expect(r.out).toContain(`runs: 0 added, 0 updated, ${RUNS} already there`);
      expect(r.out).toContain(`child runs: 0 added, 0 updated, ${home.children} already there`);
      expect(r.out).toContain(
        `logs: 0 added, 0 updated, ${home.logs} already there (0 lines written)`,
      );
    },
    LONG,
  );

  it(
    'exports the database to a file home the file store reads as the original',
    async () => {
      const out = join(dir, 'export');
      const r = await migrate(['--to', 'files', '--out', out], first);
      expect(r.code).toBe(0);
      expect(r.out).toContain(`runs: ${RUNS} added`);
      expect(r.out).toContain(`logs: ${home.logs} added`);
      const back = new FsRunStore({
        dataDir: join(out, 'data'),
        logDir: join(out, 'logs'),
        clock: systemClock,
      });
      expect(await back.listRuns({ includeChildren: true })).toHaveLength(total());
      const moved = (p: string): string =>
        p === '' ? p : p.replace(home.logDir, join(out, 'logs'));
      for (const rec of await sample()) {
        const opts = rec.parent === undefined ? {} : { root: rec.root };
        const got = await back.getRun(rec, opts);
        expect(got).toEqual({
          ...rec,
          log: moved(rec.log),
          nodes: rec.nodes.map((n) => ({ ...n, stdout: moved(n.stdout), stderr: moved(n.stderr) })),
        });
        for (const n of rec.nodes) {
          const [a, b] = await Promise.all([
            back.readLog(moved(n.stdout)),
            home.store.readLog(n.stdout),
          ]);
          expect(a).toEqual(b);
        }
      }
      const again = await migrate(['--to', 'files', '--out', out], first);
      expect(again.out).toContain(`runs: 0 added, 0 updated, ${RUNS} already there`);
    },
    LONG,
  );

  it(
    'takes a copy killed midway up where it stopped, ending as a copy made in one go',
    async () => {
      const url = await pg.createDatabase('resumed');
      const cut = start(['--to', 'postgres'], url, (err) => {
        if (err.includes('... 1000 runs')) cut.child.kill('SIGKILL');
      });
      const killed = await cut.done;
      expect(killed.code).toBeNull();
      const partway = await pgStore(url).listRuns({ includeChildren: true });
      expect(partway.length).toBeGreaterThan(0);
      expect(partway.length).toBeLessThan(total());
      const r = await migrate(['--to', 'postgres'], url);
      expect(r.code).toBe(0);
      const [, added, already] =
        /runs: (\d+) added, 0 updated, (\d+) already there/.exec(r.out) ?? [];
      expect(Number(added)).toBeGreaterThan(0);
      expect(Number(added) + Number(already)).toBe(RUNS);
      expect(await digest(url)).toEqual(await digest(first));
    },
    LONG,
  );
});
