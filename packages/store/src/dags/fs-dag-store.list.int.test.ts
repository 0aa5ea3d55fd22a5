import { mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AppError } from '@trellis/core';
import {
  codeOf,
  dagYaml,
  query,
  runOf,
  useDagStoreFixture,
} from '../../test/support/dag-store-fixture.js';

const fx = useDagStoreFixture();
const { write, listNames } = fx;

describe('FsDagStore.list', () => {
  it('lists .yaml and .yml files by DAG name ignoring case, skipping other entries', async () => {
    write('b.yaml', dagYaml('name: Beta'));
    write('a.yml', dagYaml('name: alpha'));
    write('c.yaml', dagYaml()); // named after its file
    write('notes.txt', 'not a DAG');
    write('.tmp-x.yaml.1.ab', 'half written');
    mkdirSync(join(fx.dagsDir, 'dir.yaml'));
    const r = await fx.defs.list(query());
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
    expect((await fx.defs.list(query({ tag: 'daily' }))).total).toBe(2);
  });

  it('pages the sorted list and counts every match in total', async () => {
    for (const n of ['a', 'b', 'c', 'd', 'e']) write(`${n}.yaml`, dagYaml());
    const p2 = await fx.defs.list(query({ page: 2, perPage: 2 }));
    expect(p2.entries.map((e) => e.fileName)).toEqual(['c', 'd']);
    expect(p2.total).toBe(5);
    expect(
      (await fx.defs.list(query({ page: 3, perPage: 2 }))).entries.map((e) => e.fileName),
    ).toEqual(['e']);
    expect((await fx.defs.list(query({ page: 9, perPage: 2 }))).entries).toEqual([]);
  });

  it('refuses page or perPage below 1 with bad_request', async () => {
    expect(await codeOf(fx.defs.list(query({ page: 0 })))).toBe('bad_request');
    expect(await codeOf(fx.defs.list(query({ perPage: 0 })))).toBe('bad_request');
    expect(await codeOf(fx.defs.list(query({ page: 1.5 })))).toBe('bad_request');
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
    const first = (await fx.defs.list(query({ sort: 'nextRun' }))).entries[0];
    expect(first?.nextRun).toEqual(new Date('2026-01-02T03:30:00Z'));
    // 04:40 UTC: daily 05:00, hourly 05:30, tokyo tomorrow.
    fx.clock.time = new Date('2026-01-02T04:40:00Z');
    expect(await listNames({ sort: 'nextRun' })).toEqual([
      'daily',
      'hourly',
      'tokyo',
      'also-manual',
      'manual',
    ]);
    // The clock going backwards recomputes instead of trusting the memo.
    fx.clock.time = new Date('2026-01-02T03:04:05Z');
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
    const r = await fx.defs.list(query({ sort: 'nextRun' }));
    expect(r.entries.map((e) => [e.fileName, e.nextRun?.toISOString()])).toEqual([
      ['multi', '2026-01-02T04:00:00.000Z'],
      ['later', '2026-01-02T06:00:00.000Z'],
    ]);
  });

  it('lists files with problems with their own errors, and a YAML syntax error under the file name', async () => {
    write('bad-step.yaml', 'steps:\n  - name: s\n    comand: echo\n');
    write('broken.yaml', 'steps: [\n');
    write('ok.yaml', dagYaml());
    const r = await fx.defs.list(query());
    expect(r.errors).toEqual([]);
    const byName = Object.fromEntries(r.entries.map((e) => [e.fileName, e]));
    expect(byName['bad-step']?.errors.join('\n')).toMatch(/comand/);
    expect(byName.broken?.dag.name).toBe('broken');
    expect(byName.broken?.errors.length).toBeGreaterThan(0);
    expect(byName.ok?.errors).toEqual([]);
  });

  it('reports a file that cannot be read in errors and lists the rest', async () => {
    symlinkSync(join(fx.dagsDir, 'loop.yaml'), join(fx.dagsDir, 'loop.yaml')); // ELOOP on every read
    write('ok.yaml', dagYaml());
    const r = await fx.defs.list(query());
    expect(r.entries.map((e) => e.fileName)).toEqual(['ok']);
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatch(/^reading loop\.yaml failed: /);
  });

  it('prefers x.yaml over x.yml and says so in errors', async () => {
    write('x.yml', dagYaml('description: from yml'));
    write('x.yaml', dagYaml('description: from yaml'));
    const r = await fx.defs.list(query());
    expect(r.entries.map((e) => e.dag.description)).toEqual(['from yaml']);
    expect(r.errors).toEqual([
      'x.yml is ignored: x.yaml has the same file name; remove or rename one',
    ]);
  });

  it('flags a file whose name the API cannot address', async () => {
    write('my.dag.yaml', dagYaml());
    const [e] = (await fx.defs.list(query())).entries;
    expect(e?.fileName).toBe('my.dag');
    expect(e?.errors).toEqual([expect.stringMatching(/cannot be used in the API/)]);
  });

  it('shows suspension, and reads the latest run only for the entries of the page', async () => {
    for (const n of ['a', 'b', 'c']) write(`${n}.yaml`, dagYaml());
    fx.latestRuns.set('a', runOf('a', 'r1'));
    await fx.defs.setSuspended('b', true);
    const r = await fx.defs.list(query({ perPage: 2 }));
    expect(r.entries.map((e) => [e.fileName, e.suspended, e.latestRun?.dagRunId])).toEqual([
      ['a', false, 'r1'],
      ['b', true, undefined],
    ]);
    expect(fx.latestAsked.sort()).toEqual(['a', 'b']);
  });

  it('reports a failing latest-run read in errors instead of failing the list', async () => {
    write('a.yaml', dagYaml());
    write('b.yaml', dagYaml());
    fx.latestRuns.set('a', new Error('status.json is corrupt'));
    fx.latestRuns.set('b', new AppError('not_found', 'run not found: b/latest'));
    const r = await fx.defs.list(query());
    expect(r.entries.map((e) => e.latestRun)).toEqual([undefined, undefined]);
    expect(r.errors).toEqual(['reading the latest run of a failed: status.json is corrupt']);
  });

  it('is empty when the DAGs folder does not exist yet', async () => {
    rmSync(fx.dagsDir, { recursive: true });
    expect(await fx.defs.list(query())).toEqual({ entries: [], errors: [], total: 0 });
  });
});
