import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AppError } from '@trellis/core';
import {
  codeOf,
  dagYaml,
  runOf,
  useDagStoreFixture,
} from '../../test/support/dag-store-fixture.js';

const fx = useDagStoreFixture();
const { write, read, files } = fx;

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
    fx.latestRuns.set('main', runOf('main', 'r9'));
    await fx.defs.setSuspended('multi', true);
    const d = await fx.defs.get('multi');
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
    const d = await fx.defs.get('a');
    expect(d).toMatchObject({ errors: [], localDags: [], suspended: false });
    expect(d.latestRun).toBeUndefined();
  });

  it('answers the spec text exactly as stored', async () => {
    write('a.yml', '# comment\n' + dagYaml());
    const s = await fx.defs.getSpec('a');
    expect(s.spec).toBe('# comment\n' + dagYaml());
    expect(s.dag.name).toBe('a');
    expect(s.errors).toEqual([]);
  });

  it('refuses a missing file with not_found and a bad file name with bad_request', async () => {
    expect(await codeOf(fx.defs.get('missing'))).toBe('not_found');
    expect(await codeOf(fx.defs.getSpec('missing'))).toBe('not_found');
    expect(await codeOf(fx.defs.get('../etc/passwd'))).toBe('bad_request');
    expect(await codeOf(fx.defs.getSpec('a.b'))).toBe('bad_request');
  });
});

describe('FsDagStore.putSpec', () => {
  it('writes a valid spec atomically and answers no errors', async () => {
    write('a.yaml', dagYaml());
    expect(await fx.defs.putSpec('a', dagYaml('description: new'))).toEqual({ errors: [] });
    expect(read('a.yaml')).toBe(dagYaml('description: new'));
    expect(files()).toEqual(['a.yaml']);
    expect((await fx.defs.get('a')).dag.description).toBe('new');
  });

  it('keeps the extension of a .yml file', async () => {
    write('a.yml', dagYaml());
    await fx.defs.putSpec('a', dagYaml('description: new'));
    expect(files()).toEqual(['a.yml']);
  });

  it('answers the problems and writes nothing when the spec is invalid', async () => {
    write('a.yaml', dagYaml());
    const r = await fx.defs.putSpec('a', 'steps:\n  - comand: x\n');
    expect(r.errors.length).toBeGreaterThan(0);
    expect(read('a.yaml')).toBe(dagYaml());
  });

  it('refuses a missing file with not_found', async () => {
    expect(await codeOf(fx.defs.putSpec('missing', dagYaml()))).toBe('not_found');
    expect(files()).toEqual([]);
  });
});

describe('FsDagStore.load', () => {
  it('answers a valid DAG with its local DAGs and location', async () => {
    write('m.yaml', `${dagYaml('name: m')}---\n${dagYaml('name: other')}`);
    const l = await fx.defs.load('m');
    expect(l.dag.name).toBe('m');
    expect(l.localDags.map((d) => d.name)).toEqual(['other']);
    expect(l.location).toBe(join(fx.dagsDir, 'm.yaml'));
  });

  it('refuses a DAG with problems with bad_request listing every problem', async () => {
    write('bad.yaml', 'schedule: nope\nsteps:\n  - comand: x\n');
    const err = await fx.defs.load('bad').catch((e: unknown) => e);
    expect(AppError.is(err) && err.code).toBe('bad_request');
    expect((err as AppError).details?.errors).toHaveLength(3);
    expect((err as AppError).message).toMatch(/has 3 problem\(s\):\n {2}line 1: /);
  });

  it('refuses a missing DAG with not_found', async () => {
    expect(await codeOf(fx.defs.load('missing'))).toBe('not_found');
  });
});
