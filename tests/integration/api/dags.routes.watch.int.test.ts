// The DAG endpoints of a watched store (as `trellis server` runs them): answered from memory, and
// correct within a second when DAG files are added, edited, renamed or deleted outside the API.
import {
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeFileSync,
  readFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FsDagStore } from '@trellis/store';
import { parseDagFile } from '@trellis/spec';
import { FakeClock } from '@trellis/testkit';
import { createHttpApp, dagRoutes, noAuth, type HttpDeps } from '@trellis/api';

/** What a change outside the API may take to show: the bound. */
const WITHIN_MS = 1000;

const dagYaml = (description: string, tags: string[] = []): string =>
  `description: ${description}\ntags: [${tags.join(', ')}]\nsteps:\n  - name: s\n    command: echo s\n`;

interface Env {
  home: string;
  dagsDir: string;
  indexFile: string;
  parsed: string[];
  stores: FsDagStore[];
}

let env: Env;

const storeOf = (e: Env): FsDagStore => {
  const store = new FsDagStore({
    dagsDir: e.dagsDir,
    suspendDir: join(e.home, 'suspend'),
    clock: new FakeClock('2026-01-02T03:04:05.000Z'),
    latestRun: () => Promise.resolve(undefined),
    parse: (text, o) => {
      e.parsed.push(o?.location ?? '');
      return parseDagFile(text, o);
    },
    watch: true,
    indexFile: e.indexFile,
  });
  e.stores.push(store);
  return store;
};

const apiOf = (dags: FsDagStore) => {
  const clock = new FakeClock('2026-01-02T03:04:05.000Z');
  const deps: HttpDeps = {
    version: '0.0.0-test',
    startedAt: clock.now(),
    clock,
    dags,
    runs: {} as never,
    reads: {} as never,
    auth: noAuth,
    log: { warn: () => undefined, error: () => undefined },
    health: () => Promise.resolve({}),
    metrics: () => Promise.resolve({ contentType: 'text/plain', body: '' }),
  };
  return request(createHttpApp(deps, [dagRoutes]));
};

type Api = ReturnType<typeof apiOf>;

const names = async (api: Api): Promise<string[]> => {
  const res = await api.get('/api/v2/dags?perPage=100').expect(200);
  return (res.body as { dags: { fileName: string }[] }).dags.map((d) => d.fileName);
};

/** Polls `probe` until it holds, for at most {@link WITHIN_MS}; the last answer on failure. */
const eventually = async (probe: () => Promise<boolean>, what: string): Promise<number> => {
  const t0 = Date.now();
  while (!(await probe())) {
    if (Date.now() - t0 > WITHIN_MS) throw new Error(`not seen within ${WITHIN_MS} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 10)); // poll interval, not a wait for correctness
  }
  return Date.now() - t0;
};

beforeEach(() => {
  const home = mkdtempSync(join(tmpdir(), 'trellis-dags-watch-'));
  env = {
    home,
    dagsDir: join(home, 'dags'),
    indexFile: join(home, 'dag-index.json'),
    parsed: [],
    stores: [],
  };
  mkdirSync(env.dagsDir);
});
afterEach(() => {
  for (const s of env.stores) s.close();
  rmSync(env.home, { recursive: true, force: true });
});

describe('DAG endpoints of a watched folder', () => {
  it('see files added, edited, renamed and deleted outside the API within a second', async () => {
    writeFileSync(join(env.dagsDir, 'a.yaml'), dagYaml('first', ['red']));
    const api = apiOf(storeOf(env));
    expect(await names(api)).toEqual(['a']);

    writeFileSync(join(env.dagsDir, 'b.yaml'), dagYaml('second', ['blue']));
    await eventually(async () => (await names(api)).join() === 'a,b', 'b.yaml added');
    await eventually(async () => {
      const res = await api.get('/api/v2/dags/tags').expect(200);
      return (res.body as { tags: string[] }).tags.join() === 'blue,red';
    }, 'the tag of b.yaml');

    writeFileSync(join(env.dagsDir, 'a.yaml'), dagYaml('edited with a marker', ['green']));
    await eventually(async () => {
      const res = await api.get('/api/v2/dags/search?q=marker').expect(200);
      return (
        (res.body as { results: { name: string }[] }).results.map((r) => r.name).join() === 'a'
      );
    }, 'the edit of a.yaml in search');
    const details = await api.get('/api/v2/dags/a').expect(200);
    expect((details.body as { dag: { description: string } }).dag.description).toBe(
      'edited with a marker',
    );

    renameSync(join(env.dagsDir, 'b.yaml'), join(env.dagsDir, 'c.yaml'));
    await eventually(async () => (await names(api)).join() === 'a,c', 'b.yaml renamed to c.yaml');
    await api.get('/api/v2/dags/b').expect(404);

    unlinkSync(join(env.dagsDir, 'a.yaml'));
    await eventually(async () => (await names(api)).join() === 'c', 'a.yaml deleted');
    await api.get('/api/v2/dags/a').expect(404);
  });

  it('answers repeated reads from memory: no file is parsed again', async () => {
    for (let i = 0; i < 20; i++)
      writeFileSync(join(env.dagsDir, `d${i}.yaml`), dagYaml(`number ${i}`, [`t${i % 3}`]));
    const api = apiOf(storeOf(env));
    expect(await names(api)).toHaveLength(20);
    expect(env.parsed).toHaveLength(20);
    for (let i = 0; i < 5; i++) {
      await api.get('/api/v2/dags?perPage=100').expect(200);
      await api.get('/api/v2/dags/tags').expect(200);
      await api.get('/api/v2/dags/search?q=number').expect(200);
      await api.get('/api/v2/dags/d3').expect(200);
    }
    expect(env.parsed).toHaveLength(20);
  });

  it("sees the API's own writes at once", async () => {
    const api = apiOf(storeOf(env));
    await api.post('/api/v2/dags').send({ name: 'made' }).expect(201);
    expect(await names(api)).toEqual(['made']);
    await api.post('/api/v2/dags/made/suspend').send({ suspend: true }).expect(200);
    const res = await api.get('/api/v2/dags?perPage=100').expect(200);
    expect((res.body as { dags: { suspended: boolean }[] }).dags[0]?.suspended).toBe(true);
    await api.post('/api/v2/dags/made/rename').send({ newFileName: 'renamed' }).expect(200);
    expect(await names(api)).toEqual(['renamed']);
    await api.delete('/api/v2/dags/renamed').expect(204);
    expect(await names(api)).toEqual([]);
  });

  it('starts from the index file: unchanged files are not parsed, changed ones are', async () => {
    for (let i = 0; i < 5; i++) writeFileSync(join(env.dagsDir, `d${i}.yaml`), dagYaml(`n ${i}`));
    const first = storeOf(env);
    expect(await names(apiOf(first))).toHaveLength(5);
    const indexed = (): number => {
      try {
        return (JSON.parse(readFileSync(env.indexFile, 'utf8')) as { entries: unknown[] }).entries
          .length;
      } catch {
        return 0; // not written yet
      }
    };
    await eventually(() => Promise.resolve(indexed() === 5), 'the index file written');
    first.close();
    writeFileSync(join(env.dagsDir, 'd1.yaml'), dagYaml('changed while stopped'));
    env.parsed.length = 0;
    const api = apiOf(storeOf(env));
    expect(await names(api)).toHaveLength(5);
    expect(env.parsed).toEqual([join(env.dagsDir, 'd1.yaml')]);
    const d1 = await api.get('/api/v2/dags/d1').expect(200);
    expect((d1.body as { dag: { description: string } }).dag.description).toBe(
      'changed while stopped',
    );
  });

  it('ignores an unreadable index file and parses every file', async () => {
    writeFileSync(join(env.dagsDir, 'a.yaml'), dagYaml('a'));
    writeFileSync(env.indexFile, '{ not json');
    expect(await names(apiOf(storeOf(env)))).toEqual(['a']);
    expect(env.parsed).toEqual([join(env.dagsDir, 'a.yaml')]);
  });
});
