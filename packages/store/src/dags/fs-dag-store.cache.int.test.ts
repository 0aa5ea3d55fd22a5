import { unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dagYaml, query, useDagStoreFixture } from '../../test/support/dag-store-fixture.js';

const fx = useDagStoreFixture();
const { write, listNames } = fx;

describe('FsDagStore cache', () => {
  it('parses each file once while it does not change', async () => {
    for (let i = 0; i < 20; i++) write(`d${i}.yaml`, dagYaml());
    await fx.defs.list(query());
    expect(fx.parsed).toHaveLength(20);
    await fx.defs.list(query({ sort: 'nextRun' }));
    await fx.defs.search('echo');
    await fx.defs.tags();
    await fx.defs.get('d3');
    await fx.defs.getSpec('d4');
    expect(fx.parsed).toHaveLength(20);
  });

  it('re-parses exactly the files that changed, appeared, or were replaced', async () => {
    write('a.yaml', dagYaml());
    write('b.yaml', dagYaml());
    await fx.defs.list(query());
    fx.parsed.length = 0;
    write('a.yaml', dagYaml('description: edited and longer'));
    write('c.yaml', dagYaml());
    const r = await fx.defs.list(query());
    expect(fx.parsed.sort()).toEqual([join(fx.dagsDir, 'a.yaml'), join(fx.dagsDir, 'c.yaml')]);
    expect(r.entries.find((e) => e.fileName === 'a')?.dag.description).toBe('edited and longer');
    fx.parsed.length = 0;
    await fx.defs.putSpec('b', dagYaml('description: via API')); // parse to validate, then re-read
    expect(
      (await fx.defs.list(query())).entries.find((e) => e.fileName === 'b')?.dag.description,
    ).toBe('via API');
    expect(fx.parsed).toEqual([join(fx.dagsDir, 'b.yaml'), join(fx.dagsDir, 'b.yaml')]);
  });

  it('drops deleted files without parsing anything', async () => {
    write('a.yaml', dagYaml());
    write('b.yaml', dagYaml());
    await fx.defs.list(query());
    fx.parsed.length = 0;
    unlinkSync(join(fx.dagsDir, 'a.yaml'));
    expect(await listNames()).toEqual(['b']);
    expect(fx.parsed).toEqual([]);
  });

  it('re-parses a file when a child DAG it runs appears or disappears', async () => {
    write('parent.yaml', 'steps:\n  - name: call\n    run: child\n');
    const errorsOf = async (): Promise<readonly string[] | undefined> =>
      (await fx.defs.list(query())).entries.find((e) => e.fileName === 'parent')?.errors;
    expect((await errorsOf())?.join()).toMatch(
      /child DAG "child" is neither in this file nor in the DAGs folder/,
    );
    write('child.yaml', dagYaml());
    expect(await errorsOf()).toEqual([]);
    expect(fx.parsed.filter((p) => p.endsWith('parent.yaml'))).toHaveLength(2);
    unlinkSync(join(fx.dagsDir, 'child.yaml'));
    expect((await errorsOf())?.length).toBe(1);
    expect((await fx.defs.get('parent')).errors).toHaveLength(1);
  });
});
