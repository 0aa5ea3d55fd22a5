import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { codeOf, dagYaml, useDagStoreFixture } from '../../test/support/dag-store-fixture.js';

const fx = useDagStoreFixture();
const { write } = fx;

describe('FsDagStore.search', () => {
  beforeEach(() => {
    write('etl.yaml', 'name: etl\nsteps:\n  - name: extract\n    command: extract.sh\n');
    write('report.yaml', 'steps:\n  - name: mail\n    command: send-report.sh --to ops\n');
  });

  it('finds a substring ignoring case, per file, with the snippet around each line', async () => {
    const r = await fx.defs.search('EXTRACT');
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
    const r = await fx.defs.search('/command: [a-z]+\\.sh$/');
    expect(r.results.map((x) => x.name)).toEqual(['etl']);
  });

  it('answers no results for no match', async () => {
    expect(await fx.defs.search('nothing-like-this')).toEqual({ results: [], errors: [] });
  });

  it('refuses an empty q and an invalid regex with bad_request', async () => {
    expect(await codeOf(fx.defs.search(''))).toBe('bad_request');
    expect(await codeOf(fx.defs.search('/[/'))).toBe('bad_request');
  });

  it('reports unreadable files in errors', async () => {
    symlinkSync(join(fx.dagsDir, 'loop.yaml'), join(fx.dagsDir, 'loop.yaml'));
    const r = await fx.defs.search('mail');
    expect(r.results.map((x) => x.name)).toEqual(['report']);
    expect(r.errors).toEqual([expect.stringMatching(/^reading loop\.yaml failed: /)]);
  });
});

describe('FsDagStore.tags', () => {
  it('answers every tag once, lower-cased and sorted, with unreadable files in errors', async () => {
    write('a.yaml', dagYaml('tags: [etl, Daily]'));
    write('b.yaml', dagYaml('tags: [daily, "zeta"]'));
    write('c.yaml', dagYaml());
    symlinkSync(join(fx.dagsDir, 'loop.yaml'), join(fx.dagsDir, 'loop.yaml'));
    const r = await fx.defs.tags();
    expect(r.tags).toEqual(['daily', 'etl', 'zeta']);
    expect(r.errors).toEqual([expect.stringMatching(/^reading loop\.yaml failed: /)]);
  });

  it('names a file whose YAML cannot be read as a DAG in errors, with its problem', async () => {
    write('a.yaml', dagYaml('tags: [etl]'));
    write('broken.yml', 'tags: [lost\nsteps: [\n');
    const r = await fx.defs.tags();
    expect(r.tags).toEqual(['etl']);
    expect(r.errors).toEqual([expect.stringMatching(/^broken\.yml: .+/)]);
  });

  it('is empty without DAGs', async () => {
    expect(await fx.defs.tags()).toEqual({ tags: [], errors: [] });
  });
});
