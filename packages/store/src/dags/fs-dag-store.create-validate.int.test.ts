import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AppError } from '@trellis/core';
import {
  codeOf,
  dagYaml,
  query,
  useDagStoreFixture,
} from '../../test/support/dag-store-fixture.js';
import { MINIMAL_DAG_SPEC } from './fs-dag-store.js';

const fx = useDagStoreFixture();
const { write, read, files } = fx;

describe('FsDagStore.create', () => {
  it('writes a minimal one-step DAG without a spec', async () => {
    await fx.defs.create('hello');
    expect(read('hello.yaml')).toBe(MINIMAL_DAG_SPEC);
    expect(MINIMAL_DAG_SPEC).toBe('steps:\n  - name: hello\n    command: echo hello\n');
    const [e] = (await fx.defs.list(query())).entries;
    expect(e).toMatchObject({ fileName: 'hello', errors: [] });
    expect(e?.dag.steps.map((s) => s.command)).toEqual(['echo']);
  });

  it('writes a valid spec as given, keeping its own name, and leaves no temporary file', async () => {
    const spec = dagYaml('name: custom\ndescription: mine');
    await fx.defs.create('file-name', spec);
    expect(read('file-name.yaml')).toBe(spec);
    expect(files()).toEqual(['file-name.yaml']);
    expect((await fx.defs.get('file-name')).dag.name).toBe('custom');
  });

  it('treats a blank spec as none', async () => {
    await fx.defs.create('blank', '  \n');
    expect(read('blank.yaml')).toBe(MINIMAL_DAG_SPEC);
  });

  it('creates the DAGs folder when it is missing', async () => {
    rmSync(fx.dagsDir, { recursive: true });
    await fx.defs.create('first');
    expect(files()).toEqual(['first.yaml']);
  });

  it('refuses an invalid spec with every problem, joined by "; ", and writes nothing', async () => {
    const err = await fx.defs
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
    expect(await codeOf(fx.defs.create(name))).toBe('bad_request');
    expect(files()).toEqual([]);
  });

  it('accepts a 40-character name', async () => {
    await fx.defs.create('x'.repeat(40));
    expect(files()).toEqual([`${'x'.repeat(40)}.yaml`]);
  });

  it('refuses an existing file (.yaml or .yml) with already_exists and keeps it', async () => {
    write('a.yaml', 'original');
    write('b.yml', 'original');
    expect(await codeOf(fx.defs.create('a'))).toBe('already_exists');
    expect(await codeOf(fx.defs.create('b', dagYaml()))).toBe('already_exists');
    expect(read('a.yaml')).toBe('original');
    expect(files()).toEqual(['a.yaml', 'b.yml']);
  });

  it('lets exactly one of two racing creators win', async () => {
    const results = await Promise.allSettled([
      fx.defs.create('race', dagYaml('description: one')),
      fx.defs.create('race', dagYaml('description: two')),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.find((r) => r.status === 'rejected');
    expect(AppError.is(rejected?.reason) && rejected.reason.code).toBe('already_exists');
    expect(files()).toEqual(['race.yaml']);
  });
});

describe('FsDagStore.validate', () => {
  it('accepts a valid spec and persists nothing', () => {
    const r = fx.defs.validate(dagYaml('name: fine'));
    expect(r).toMatchObject({ valid: true, errors: [] });
    expect(r.dag?.name).toBe('fine');
    expect(files()).toEqual([]);
  });

  it('uses name only when the spec has none, and validated-dag when neither has one', () => {
    expect(fx.defs.validate(dagYaml(), 'given').dag?.name).toBe('given');
    expect(fx.defs.validate(dagYaml('name: own'), 'given').dag?.name).toBe('own');
    expect(fx.defs.validate(dagYaml()).dag?.name).toBe('validated-dag');
    expect(fx.defs.validate(dagYaml(), '').dag?.name).toBe('validated-dag');
  });

  it('reports an invalid name as a problem, never as an exception', () => {
    const r = fx.defs.validate(dagYaml(), 'bad name');
    expect(r.valid).toBe(false);
    expect(r.errors).toEqual([expect.stringMatching(/^name: invalid DAG name "bad name"/)]);
    expect(fx.defs.validate(dagYaml(), 'x'.repeat(41)).errors).toEqual([
      expect.stringMatching(/41 characters/),
    ]);
  });

  it('reports a missing spec as a problem, with a bad name too, never as an exception', () => {
    expect(fx.defs.validate(undefined)).toEqual({
      valid: false,
      errors: ['spec is required: send the DAG definition as YAML text in "spec"'],
    });
    expect(fx.defs.validate(undefined, 'bad name').errors).toHaveLength(2);
  });

  it('returns every problem and the partial DAG', () => {
    const r = fx.defs.validate(
      'description: partly\nschedule: "not cron"\nsteps:\n  - name: a\n    command: echo\n',
    );
    expect(r.valid).toBe(false);
    expect(r.errors).toEqual([expect.stringMatching(/^line 2: schedule: invalid cron expression/)]);
    expect(r.dag?.description).toBe('partly');
    expect(r.dag?.steps.map((s) => s.name)).toEqual(['a']);
  });

  it('gives a named stub DAG for a YAML syntax error', () => {
    const r = fx.defs.validate('steps: [', 'x');
    expect(r.valid).toBe(false);
    expect(r.dag?.name).toBe('x');
  });

  it('checks child DAGs against the DAGs folder', () => {
    const spec = 'steps:\n  - name: c\n    run: child\n';
    expect(fx.defs.validate(spec).valid).toBe(false);
    write('child.yaml', dagYaml());
    expect(fx.defs.validate(spec).valid).toBe(true);
  });
});
