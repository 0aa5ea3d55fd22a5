import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AppError, type Clock } from '@trellis/core';
import { parseDagFile, type DagRunRecord } from '@trellis/spec';
import { makeRunRecord } from '@trellis/testkit';
import type { DagListQuery } from '@trellis/services';
import { FsDagStore, MINIMAL_DAG_SPEC } from './fs-dag-store.js';

/** A clock tests set directly, forwards or backwards. */
class SettableClock implements Clock {
  constructor(public time: Date) {}
  now(): Date {
    return new Date(this.time.getTime());
  }
  sleep(): Promise<void> {
    return Promise.resolve();
  }
}

let home: string;
let dagsDir: string;
let suspendDir: string;
let clock: SettableClock;
/** Locations parsed so far (the injected parser records each call). */
let parsed: string[];
let latestRuns: Map<string, DagRunRecord | Error>;
let latestAsked: string[];
let defs: FsDagStore;

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'trellis-dags-'));
  dagsDir = join(home, 'dags');
  suspendDir = join(home, 'suspend');
  mkdirSync(dagsDir);
  parsed = [];
  latestRuns = new Map();
  latestAsked = [];
  clock = new SettableClock(new Date('2026-01-02T03:04:05.000Z'));
  defs = new FsDagStore({
    dagsDir,
    suspendDir,
    clock,
    latestRun: (name) => {
      latestAsked.push(name);
      const r = latestRuns.get(name);
      return r instanceof Error ? Promise.reject(r) : Promise.resolve(r);
    },
    parse: (text, o) => {
      parsed.push(o?.location ?? '');
      return parseDagFile(text, o);
    },
  });
});

afterEach(() => rmSync(home, { recursive: true, force: true }));

const write = (entry: string, text: string): void => writeFileSync(join(dagsDir, entry), text);
const read = (entry: string): string => readFileSync(join(dagsDir, entry), 'utf8');
const files = (): string[] => readdirSync(dagsDir).sort();
const dagYaml = (extra = ''): string =>
  `${extra}${extra ? '\n' : ''}steps:\n  - name: s\n    command: echo s\n`;
const runOf = (name: string, dagRunId: string): DagRunRecord =>
  makeRunRecord(parseDagFile('steps: [echo hi]', { name }).main.dag, dagRunId);

const codeOf = async (p: Promise<unknown> | (() => unknown)): Promise<string | undefined> => {
  try {
    await (typeof p === 'function' ? p() : p);
    return undefined;
  } catch (e) {
    return AppError.is(e) ? e.code : `not an AppError: ${String(e)}`;
  }
};

const query = (q: Partial<DagListQuery> = {}): DagListQuery => ({
  page: 1,
  perPage: 50,
  sort: 'name',
  order: 'asc',
  ...q,
});
const listNames = async (q: Partial<DagListQuery> = {}): Promise<string[]> =>
  (await defs.list(query(q))).entries.map((e) => e.fileName);

describe('FsDagStore.list', () => {
  it('lists .yaml and .yml files by DAG name ignoring case, skipping other entries', async () => {
    write('b.yaml', dagYaml('name: Beta'));
    write('a.yml', dagYaml('name: alpha'));
    write('c.yaml', dagYaml()); // named after its file
    write('notes.txt', 'not a DAG');
    write('.tmp-x.yaml.1.ab', 'half written');
    mkdirSync(join(dagsDir, 'dir.yaml'));
    const r = await defs.list(query());
    expect(r.entries.map((e) => [e.fileName, e.dag.name])).toEqual([
      ['a', 'alpha'],
      ['b', 'Beta'],
      ['c', 'c'],
    ]);
    expect(r.total).toBe(3);
    expect(r.errors).toEqual([]);
    expect(r.entries[0]).toMatchObject({ errors: [], suspended: false });
  });

  it('breaks name ties by file name and reverses with order=desc', async () => {
    write('y.yaml', dagYaml('name: same'));
    write('x.yaml', dagYaml('name: Same'));
    write('a.yaml', dagYaml('name: zzz'));
    expect(await listNames()).toEqual(['x', 'y', 'a']);
    expect(await listNames({ order: 'desc' })).toEqual(['a', 'y', 'x']);
  });

  it('filters by name (file or DAG name, any case) and by tag (exact, any case)', async () => {
    write('nightly-etl.yaml', dagYaml('name: warehouse\ntags: [ETL, daily]'));
    write('report.yaml', dagYaml('tags: [daily]'));
    write('other.yaml', dagYaml('tags: [etl-ish]'));
    expect(await listNames({ name: 'ETL' })).toEqual(['nightly-etl']);
    expect(await listNames({ name: 'HOUSE' })).toEqual(['nightly-etl']);
    expect(await listNames({ tag: 'etl' })).toEqual(['nightly-etl']);
    expect(await listNames({ tag: 'DAILY' })).toEqual(['report', 'nightly-etl']); // by DAG name: report < warehouse
    expect(await listNames({ tag: 'daily', name: 'rep' })).toEqual(['report']);
    expect((await defs.list(query({ tag: 'daily' }))).total).toBe(2);
  });

  it('pages the sorted list and counts every match in total', async () => {
    for (const n of ['a', 'b', 'c', 'd', 'e']) write(`${n}.yaml`, dagYaml());
    const p2 = await defs.list(query({ page: 2, perPage: 2 }));
    expect(p2.entries.map((e) => e.fileName)).toEqual(['c', 'd']);
    expect(p2.total).toBe(5);
    expect(
      (await defs.list(query({ page: 3, perPage: 2 }))).entries.map((e) => e.fileName),
    ).toEqual(['e']);
    expect((await defs.list(query({ page: 9, perPage: 2 }))).entries).toEqual([]);
  });

  it('refuses page or perPage below 1 with bad_request', async () => {
    expect(await codeOf(defs.list(query({ page: 0 })))).toBe('bad_request');
    expect(await codeOf(defs.list(query({ perPage: 0 })))).toBe('bad_request');
    expect(await codeOf(defs.list(query({ page: 1.5 })))).toBe('bad_request');
  });

  it('sorts by next run with a fake clock, unscheduled DAGs last in both orders', async () => {
    write('hourly.yaml', dagYaml('schedule: "CRON_TZ=UTC 30 * * * *"'));
    write('daily.yaml', dagYaml('schedule: "CRON_TZ=UTC 0 5 * * *"'));
    write('tokyo.yaml', dagYaml('schedule: "CRON_TZ=Asia/Tokyo 0 13 * * *"')); // 04:00 UTC
    write('manual.yaml', dagYaml());
    write('also-manual.yaml', dagYaml());
    // 03:04 UTC: hourly 03:30, tokyo 04:00, daily 05:00.
    expect(await listNames({ sort: 'nextRun' })).toEqual([
      'hourly',
      'tokyo',
      'daily',
      'also-manual',
      'manual',
    ]);
    expect(await listNames({ sort: 'nextRun', order: 'desc' })).toEqual([
      'daily',
      'tokyo',
      'hourly',
      'manual',
      'also-manual',
    ]);
    const first = (await defs.list(query({ sort: 'nextRun' }))).entries[0];
    expect(first?.nextRun).toEqual(new Date('2026-01-02T03:30:00Z'));
    // 04:40 UTC: daily 05:00, hourly 05:30, tokyo tomorrow.
    clock.time = new Date('2026-01-02T04:40:00Z');
    expect(await listNames({ sort: 'nextRun' })).toEqual([
      'daily',
      'hourly',
      'tokyo',
      'also-manual',
      'manual',
    ]);
    // The clock going backwards recomputes instead of trusting the memo.
    clock.time = new Date('2026-01-02T03:04:05Z');
    expect(await listNames({ sort: 'nextRun' })).toEqual([
      'hourly',
      'tokyo',
      'daily',
      'also-manual',
      'manual',
    ]);
  });

  it('uses the earliest of several start schedules and ignores stop schedules', async () => {
    write(
      'multi.yaml',
      dagYaml(
        'schedule:\n  start: ["CRON_TZ=UTC 0 9 * * *", "CRON_TZ=UTC 0 4 * * *"]\n  stop: "CRON_TZ=UTC 10 3 * * *"',
      ),
    );
    write('later.yaml', dagYaml('schedule: "CRON_TZ=UTC 0 6 * * *"'));
    const r = await defs.list(query({ sort: 'nextRun' }));
    expect(r.entries.map((e) => [e.fileName, e.nextRun?.toISOString()])).toEqual([
      ['multi', '2026-01-02T04:00:00.000Z'],
      ['later', '2026-01-02T06:00:00.000Z'],
    ]);
  });

  it('lists files with problems with their own errors, and a YAML syntax error under the file name', async () => {
    write('bad-step.yaml', 'steps:\n  - name: s\n    comand: echo\n');
    write('broken.yaml', 'steps: [\n');
    write('ok.yaml', dagYaml());
    const r = await defs.list(query());
    expect(r.errors).toEqual([]);
    const byName = Object.fromEntries(r.entries.map((e) => [e.fileName, e]));
    expect(byName['bad-step']?.errors.join('\n')).toMatch(/comand/);
    expect(byName.broken?.dag.name).toBe('broken');
    expect(byName.broken?.errors.length).toBeGreaterThan(0);
    expect(byName.ok?.errors).toEqual([]);
  });

  it('reports a file that cannot be read in errors and lists the rest', async () => {
    symlinkSync(join(dagsDir, 'loop.yaml'), join(dagsDir, 'loop.yaml')); // ELOOP on every read
    write('ok.yaml', dagYaml());
    const r = await defs.list(query());
    expect(r.entries.map((e) => e.fileName)).toEqual(['ok']);
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatch(/^reading loop\.yaml failed: /);
  });

  it('prefers x.yaml over x.yml and says so in errors', async () => {
    write('x.yml', dagYaml('description: from yml'));
    write('x.yaml', dagYaml('description: from yaml'));
    const r = await defs.list(query());
    expect(r.entries.map((e) => e.dag.description)).toEqual(['from yaml']);
    expect(r.errors).toEqual([
      'x.yml is ignored: x.yaml has the same file name; remove or rename one',
    ]);
  });

  it('flags a file whose name the API cannot address', async () => {
    write('my.dag.yaml', dagYaml());
    const [e] = (await defs.list(query())).entries;
    expect(e?.fileName).toBe('my.dag');
    expect(e?.errors).toEqual([expect.stringMatching(/cannot be used in the API/)]);
  });

  it('shows suspension, and reads the latest run only for the entries of the page', async () => {
    for (const n of ['a', 'b', 'c']) write(`${n}.yaml`, dagYaml());
    latestRuns.set('a', runOf('a', 'r1'));
    await defs.setSuspended('b', true);
    const r = await defs.list(query({ perPage: 2 }));
    expect(r.entries.map((e) => [e.fileName, e.suspended, e.latestRun?.dagRunId])).toEqual([
      ['a', false, 'r1'],
      ['b', true, undefined],
    ]);
    expect(latestAsked.sort()).toEqual(['a', 'b']);
  });

  it('reports a failing latest-run read in errors instead of failing the list', async () => {
    write('a.yaml', dagYaml());
    write('b.yaml', dagYaml());
    latestRuns.set('a', new Error('status.json is corrupt'));
    latestRuns.set('b', new AppError('not_found', 'run not found: b/latest'));
    const r = await defs.list(query());
    expect(r.entries.map((e) => e.latestRun)).toEqual([undefined, undefined]);
    expect(r.errors).toEqual(['reading the latest run of a failed: status.json is corrupt']);
  });

  it('is empty when the DAGs folder does not exist yet', async () => {
    rmSync(dagsDir, { recursive: true });
    expect(await defs.list(query())).toEqual({ entries: [], errors: [], total: 0 });
  });
});

describe('FsDagStore cache', () => {
  it('parses each file once while it does not change', async () => {
    for (let i = 0; i < 20; i++) write(`d${i}.yaml`, dagYaml());
    await defs.list(query());
    expect(parsed).toHaveLength(20);
    await defs.list(query({ sort: 'nextRun' }));
    await defs.search('echo');
    await defs.tags();
    await defs.get('d3');
    await defs.getSpec('d4');
    expect(parsed).toHaveLength(20);
  });

  it('re-parses exactly the files that changed, appeared, or were replaced', async () => {
    write('a.yaml', dagYaml());
    write('b.yaml', dagYaml());
    await defs.list(query());
    parsed.length = 0;
    write('a.yaml', dagYaml('description: edited and longer'));
    write('c.yaml', dagYaml());
    const r = await defs.list(query());
    expect(parsed.sort()).toEqual([join(dagsDir, 'a.yaml'), join(dagsDir, 'c.yaml')]);
    expect(r.entries.find((e) => e.fileName === 'a')?.dag.description).toBe('edited and longer');
    parsed.length = 0;
    await defs.putSpec('b', dagYaml('description: via API')); // parse to validate, then re-read
    expect(
      (await defs.list(query())).entries.find((e) => e.fileName === 'b')?.dag.description,
    ).toBe('via API');
    expect(parsed).toEqual([join(dagsDir, 'b.yaml'), join(dagsDir, 'b.yaml')]);
  });

  it('drops deleted files without parsing anything', async () => {
    write('a.yaml', dagYaml());
    write('b.yaml', dagYaml());
    await defs.list(query());
    parsed.length = 0;
    unlinkSync(join(dagsDir, 'a.yaml'));
    expect(await listNames()).toEqual(['b']);
    expect(parsed).toEqual([]);
  });

  it('re-parses a file when a child DAG it runs appears or disappears', async () => {
    write('parent.yaml', 'steps:\n  - name: call\n    run: child\n');
    const errorsOf = async (): Promise<readonly string[] | undefined> =>
      (await defs.list(query())).entries.find((e) => e.fileName === 'parent')?.errors;
    expect((await errorsOf())?.join()).toMatch(
      /child DAG "child" is neither in this file nor in the DAGs folder/,
    );
    write('child.yaml', dagYaml());
    expect(await errorsOf()).toEqual([]);
    expect(parsed.filter((p) => p.endsWith('parent.yaml'))).toHaveLength(2);
    unlinkSync(join(dagsDir, 'child.yaml'));
    expect((await errorsOf())?.length).toBe(1);
    expect((await defs.get('parent')).errors).toHaveLength(1);
  });
});

describe('FsDagStore.create', () => {
  it('writes a minimal one-step DAG without a spec', async () => {
    await defs.create('hello');
    expect(read('hello.yaml')).toBe(MINIMAL_DAG_SPEC);
    expect(MINIMAL_DAG_SPEC).toBe('steps:\n  - name: hello\n    command: echo hello\n');
    const [e] = (await defs.list(query())).entries;
    expect(e).toMatchObject({ fileName: 'hello', errors: [] });
    expect(e?.dag.steps.map((s) => s.command)).toEqual(['echo']);
  });

  it('writes a valid spec as given, keeping its own name, and leaves no temporary file', async () => {
    const spec = dagYaml('name: custom\ndescription: mine');
    await defs.create('file-name', spec);
    expect(read('file-name.yaml')).toBe(spec);
    expect(files()).toEqual(['file-name.yaml']);
    expect((await defs.get('file-name')).dag.name).toBe('custom');
  });

  it('treats a blank spec as none', async () => {
    await defs.create('blank', '  \n');
    expect(read('blank.yaml')).toBe(MINIMAL_DAG_SPEC);
  });

  it('creates the DAGs folder when it is missing', async () => {
    rmSync(dagsDir, { recursive: true });
    await defs.create('first');
    expect(files()).toEqual(['first.yaml']);
  });

  it('refuses an invalid spec with every problem, joined by "; ", and writes nothing', async () => {
    const err = await defs
      .create('bad', 'schedule: nope\nsteps:\n  - name: a\n    depends: [nope]\n    command: x\n')
      .catch((e: unknown) => e);
    expect(AppError.is(err) && err.code).toBe('bad_request');
    const message = (err as AppError).message;
    expect(message).toMatch(/^the spec has 2 problem\(s\): /);
    expect(message.split('; ')).toHaveLength(2);
    expect((err as AppError).details?.errors).toHaveLength(2);
    expect(files()).toEqual([]);
  });

  it.each([
    ['bad name', 'pattern'],
    ['a/b', 'pattern'],
    ['..', 'pattern'],
    ['x'.repeat(41), 'length'],
    ['search', 'reserved'],
    ['tags', 'reserved'],
  ])('refuses the file name %j (%s) with bad_request', async (name) => {
    expect(await codeOf(defs.create(name))).toBe('bad_request');
    expect(files()).toEqual([]);
  });

  it('accepts a 40-character name', async () => {
    await defs.create('x'.repeat(40));
    expect(files()).toEqual([`${'x'.repeat(40)}.yaml`]);
  });

  it('refuses an existing file (.yaml or .yml) with already_exists and keeps it', async () => {
    write('a.yaml', 'original');
    write('b.yml', 'original');
    expect(await codeOf(defs.create('a'))).toBe('already_exists');
    expect(await codeOf(defs.create('b', dagYaml()))).toBe('already_exists');
    expect(read('a.yaml')).toBe('original');
    expect(files()).toEqual(['a.yaml', 'b.yml']);
  });

  it('lets exactly one of two racing creators win', async () => {
    const results = await Promise.allSettled([
      defs.create('race', dagYaml('description: one')),
      defs.create('race', dagYaml('description: two')),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.find((r) => r.status === 'rejected');
    expect(AppError.is(rejected?.reason) && rejected.reason.code).toBe('already_exists');
    expect(files()).toEqual(['race.yaml']);
  });
});

describe('FsDagStore.search', () => {
  beforeEach(() => {
    write('etl.yaml', 'name: etl\nsteps:\n  - name: extract\n    command: extract.sh\n');
    write('report.yaml', 'steps:\n  - name: mail\n    command: send-report.sh --to ops\n');
  });

  it('finds a substring ignoring case, per file, with the snippet around each line', async () => {
    const r = await defs.search('EXTRACT');
    expect(r.errors).toEqual([]);
    expect(r.results.map((x) => [x.name, x.dag.name])).toEqual([['etl', 'etl']]);
    expect(r.results[0]?.matches).toEqual([
      {
        line: 'name: etl\nsteps:\n  - name: extract\n    command: extract.sh',
        lineNumber: 3,
        startLine: 1,
      },
      { line: 'steps:\n  - name: extract\n    command: extract.sh', lineNumber: 4, startLine: 2 },
    ]);
  });

  it('reads /regex/ as a regular expression', async () => {
    const r = await defs.search('/command: [a-z]+\\.sh$/');
    expect(r.results.map((x) => x.name)).toEqual(['etl']);
  });

  it('answers no results for no match', async () => {
    expect(await defs.search('nothing-like-this')).toEqual({ results: [], errors: [] });
  });

  it('refuses an empty q and an invalid regex with bad_request', async () => {
    expect(await codeOf(defs.search(''))).toBe('bad_request');
    expect(await codeOf(defs.search('/[/'))).toBe('bad_request');
  });

  it('reports unreadable files in errors', async () => {
    symlinkSync(join(dagsDir, 'loop.yaml'), join(dagsDir, 'loop.yaml'));
    const r = await defs.search('mail');
    expect(r.results.map((x) => x.name)).toEqual(['report']);
    expect(r.errors).toEqual([expect.stringMatching(/^reading loop\.yaml failed: /)]);
  });
});

describe('FsDagStore.tags', () => {
  it('answers every tag once, lower-cased and sorted, with unreadable files in errors', async () => {
    write('a.yaml', dagYaml('tags: [etl, Daily]'));
    write('b.yaml', dagYaml('tags: [daily, "zeta"]'));
    write('c.yaml', dagYaml());
    symlinkSync(join(dagsDir, 'loop.yaml'), join(dagsDir, 'loop.yaml'));
    const r = await defs.tags();
    expect(r.tags).toEqual(['daily', 'etl', 'zeta']);
    expect(r.errors).toEqual([expect.stringMatching(/^reading loop\.yaml failed: /)]);
  });

  it('is empty without DAGs', async () => {
    expect(await defs.tags()).toEqual({ tags: [], errors: [] });
  });
});

describe('FsDagStore.validate', () => {
  it('accepts a valid spec and persists nothing', () => {
    const r = defs.validate(dagYaml('name: fine'));
    expect(r).toMatchObject({ valid: true, errors: [] });
    expect(r.dag?.name).toBe('fine');
    expect(files()).toEqual([]);
  });

  it('uses name only when the spec has none, and validated-dag when neither has one', () => {
    expect(defs.validate(dagYaml(), 'given').dag?.name).toBe('given');
    expect(defs.validate(dagYaml('name: own'), 'given').dag?.name).toBe('own');
    expect(defs.validate(dagYaml()).dag?.name).toBe('validated-dag');
    expect(defs.validate(dagYaml(), '').dag?.name).toBe('validated-dag');
  });

  it('reports an invalid name as a problem, never as an exception', () => {
    const r = defs.validate(dagYaml(), 'bad name');
    expect(r.valid).toBe(false);
    expect(r.errors).toEqual([expect.stringMatching(/^name: invalid DAG name "bad name"/)]);
    expect(defs.validate(dagYaml(), 'x'.repeat(41)).errors).toEqual([
      expect.stringMatching(/41 characters/),
    ]);
  });

  it('returns every problem and the partial DAG', () => {
    const r = defs.validate(
      'description: partly\nschedule: "not cron"\nsteps:\n  - name: a\n    command: echo\n',
    );
    expect(r.valid).toBe(false);
    expect(r.errors).toEqual([expect.stringMatching(/^line 2: schedule: invalid cron expression/)]);
    expect(r.dag?.description).toBe('partly');
    expect(r.dag?.steps.map((s) => s.name)).toEqual(['a']);
  });

  it('gives a named stub DAG for a YAML syntax error', () => {
    const r = defs.validate('steps: [', 'x');
    expect(r.valid).toBe(false);
    expect(r.dag?.name).toBe('x');
  });

  it('checks child DAGs against the DAGs folder', () => {
    const spec = 'steps:\n  - name: c\n    run: child\n';
    expect(defs.validate(spec).valid).toBe(false);
    write('child.yaml', dagYaml());
    expect(defs.validate(spec).valid).toBe(true);
  });
});

describe('FsDagStore.get and getSpec', () => {
  const multi = [
    'name: main',
    'steps:',
    '  - name: call',
    '    run: zeta',
    '---',
    'name: zeta',
    'steps:',
    '  - name: z',
    '    command: echo z',
    '---',
    'name: alpha',
    'schedule: nope',
    'steps:',
    '  - name: a',
    '    command: echo a',
    '',
  ].join('\n');

  it('answers the DAG, its local DAGs sorted by name with their own errors, and the file errors', async () => {
    write('multi.yaml', multi);
    latestRuns.set('main', runOf('main', 'r9'));
    await defs.setSuspended('multi', true);
    const d = await defs.get('multi');
    expect(d.fileName).toBe('multi');
    expect(d.dag.name).toBe('main');
    expect(d.localDags.map((l) => [l.name, l.dag.name, l.errors.length])).toEqual([
      ['alpha', 'alpha', 1],
      ['zeta', 'zeta', 0],
    ]);
    expect(d.errors).toHaveLength(1);
    expect(d.errors[0]).toMatch(/invalid cron expression/);
    expect(d.suspended).toBe(true);
    expect(d.latestRun?.dagRunId).toBe('r9');
  });

  it('answers no latest run for a DAG that never ran', async () => {
    write('a.yaml', dagYaml());
    const d = await defs.get('a');
    expect(d).toMatchObject({ errors: [], localDags: [], suspended: false });
    expect(d.latestRun).toBeUndefined();
  });

  it('answers the spec text exactly as stored', async () => {
    write('a.yml', '# comment\n' + dagYaml());
    const s = await defs.getSpec('a');
    expect(s.spec).toBe('# comment\n' + dagYaml());
    expect(s.dag.name).toBe('a');
    expect(s.errors).toEqual([]);
  });

  it('refuses a missing file with not_found and a bad file name with bad_request', async () => {
    expect(await codeOf(defs.get('missing'))).toBe('not_found');
    expect(await codeOf(defs.getSpec('missing'))).toBe('not_found');
    expect(await codeOf(defs.get('../etc/passwd'))).toBe('bad_request');
    expect(await codeOf(defs.getSpec('a.b'))).toBe('bad_request');
  });
});

describe('FsDagStore.putSpec', () => {
  it('writes a valid spec atomically and answers no errors', async () => {
    write('a.yaml', dagYaml());
    expect(await defs.putSpec('a', dagYaml('description: new'))).toEqual({ errors: [] });
    expect(read('a.yaml')).toBe(dagYaml('description: new'));
    expect(files()).toEqual(['a.yaml']);
    expect((await defs.get('a')).dag.description).toBe('new');
  });

  it('keeps the extension of a .yml file', async () => {
    write('a.yml', dagYaml());
    await defs.putSpec('a', dagYaml('description: new'));
    expect(files()).toEqual(['a.yml']);
  });

  it('answers the problems and writes nothing when the spec is invalid', async () => {
    write('a.yaml', dagYaml());
    const r = await defs.putSpec('a', 'steps:\n  - comand: x\n');
    expect(r.errors.length).toBeGreaterThan(0);
    expect(read('a.yaml')).toBe(dagYaml());
  });

  it('refuses a missing file with not_found', async () => {
    expect(await codeOf(defs.putSpec('missing', dagYaml()))).toBe('not_found');
    expect(files()).toEqual([]);
  });
});

describe('FsDagStore.delete', () => {
  it('removes the file and its suspend flag', async () => {
    write('a.yaml', dagYaml());
    await defs.setSuspended('a', true);
    await defs.delete('a');
    expect(files()).toEqual([]);
    expect(existsSync(join(suspendDir, 'a.suspend'))).toBe(false);
    expect(await listNames()).toEqual([]);
  });

  it('refuses a missing file with not_found', async () => {
    expect(await codeOf(defs.delete('missing'))).toBe('not_found');
  });
});

describe('FsDagStore.rename', () => {
  it('moves the file, keeping its extension and its suspension', async () => {
    write('old.yml', dagYaml());
    await defs.setSuspended('old', true);
    await defs.rename('old', 'new');
    expect(files()).toEqual(['new.yml']);
    expect(defs.isSuspended('new')).toBe(true);
    expect(existsSync(join(suspendDir, 'old.suspend'))).toBe(false);
    expect(await listNames()).toEqual(['new']);
  });

  it('does not inherit a stale suspend flag of the new name', async () => {
    write('old.yaml', dagYaml());
    mkdirSync(suspendDir);
    writeFileSync(join(suspendDir, 'new.suspend'), '');
    await defs.rename('old', 'new');
    expect(defs.isSuspended('new')).toBe(false);
  });

  it('refuses an existing target with already_exists and changes nothing', async () => {
    write('a.yaml', dagYaml('description: a'));
    write('b.yml', dagYaml('description: b'));
    expect(await codeOf(defs.rename('a', 'b'))).toBe('already_exists');
    expect(await codeOf(defs.rename('a', 'a'))).toBe('already_exists');
    expect(files()).toEqual(['a.yaml', 'b.yml']);
    expect(read('a.yaml')).toBe(dagYaml('description: a'));
  });

  it('refuses a bad target with bad_request and a missing source with not_found', async () => {
    write('a.yaml', dagYaml());
    expect(await codeOf(defs.rename('a', 'b c'))).toBe('bad_request');
    expect(await codeOf(defs.rename('a', 'x'.repeat(41)))).toBe('bad_request');
    expect(await codeOf(defs.rename('a', 'search'))).toBe('bad_request');
    expect(await codeOf(defs.rename('missing', 'b'))).toBe('not_found');
    expect(files()).toEqual(['a.yaml']);
  });
});

describe('FsDagStore suspension', () => {
  it('keeps an empty flag file per suspended DAG', async () => {
    write('a.yaml', dagYaml());
    expect(defs.isSuspended('a')).toBe(false);
    await defs.setSuspended('a', true);
    expect(readFileSync(join(suspendDir, 'a.suspend'), 'utf8')).toBe('');
    expect(defs.isSuspended('a')).toBe(true);
    await defs.setSuspended('a', true); // idempotent
    await defs.setSuspended('a', false);
    expect(defs.isSuspended('a')).toBe(false);
    await defs.setSuspended('a', false);
  });

  it('refuses a missing DAG with not_found', async () => {
    expect(await codeOf(defs.setSuspended('missing', true))).toBe('not_found');
    expect(await codeOf(() => defs.isSuspended('missing'))).toBe('not_found');
    expect(existsSync(suspendDir)).toBe(false);
  });
});

describe('FsDagStore.load', () => {
  it('answers a valid DAG with its local DAGs and location', async () => {
    write('m.yaml', `${dagYaml('name: m')}---\n${dagYaml('name: other')}`);
    const l = await defs.load('m');
    expect(l.dag.name).toBe('m');
    expect(l.localDags.map((d) => d.name)).toEqual(['other']);
    expect(l.location).toBe(join(dagsDir, 'm.yaml'));
  });

  it('refuses a DAG with problems with bad_request listing every problem', async () => {
    write('bad.yaml', 'schedule: nope\nsteps:\n  - comand: x\n');
    const err = await defs.load('bad').catch((e: unknown) => e);
    expect(AppError.is(err) && err.code).toBe('bad_request');
    expect((err as AppError).details?.errors).toHaveLength(3);
    expect((err as AppError).message).toMatch(/has 3 problem\(s\):\n {2}line 1: /);
  });

  it('refuses a missing DAG with not_found', async () => {
    expect(await codeOf(defs.load('missing'))).toBe('not_found');
  });
});
