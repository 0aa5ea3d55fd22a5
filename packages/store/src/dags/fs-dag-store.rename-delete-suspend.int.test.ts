import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codeOf, dagYaml, useDagStoreFixture } from '../../test/support/dag-store-fixture.js';

const fx = useDagStoreFixture();
const { write, read, files, listNames } = fx;

describe('FsDagStore.delete', () => {
  it('removes the file and its suspend flag', async () => {
    write('a.yaml', dagYaml());
    await fx.defs.setSuspended('a', true);
    await fx.defs.delete('a');
    expect(files()).toEqual([]);
    expect(existsSync(join(fx.suspendDir, 'a.suspend'))).toBe(false);
    expect(await listNames()).toEqual([]);
  });

  it('refuses a missing file with not_found', async () => {
    expect(await codeOf(fx.defs.delete('missing'))).toBe('not_found');
  });
});

describe('FsDagStore.rename', () => {
  it('moves the file, keeping its extension and its suspension', async () => {
    write('old.yml', dagYaml());
    await fx.defs.setSuspended('old', true);
    await fx.defs.rename('old', 'new');
    expect(files()).toEqual(['new.yml']);
    expect(fx.defs.isSuspended('new')).toBe(true);
    expect(existsSync(join(fx.suspendDir, 'old.suspend'))).toBe(false);
    expect(await listNames()).toEqual(['new']);
  });

  it('does not inherit a stale suspend flag of the new name', async () => {
    write('old.yaml', dagYaml());
    mkdirSync(fx.suspendDir);
    writeFileSync(join(fx.suspendDir, 'new.suspend'), '');
    await fx.defs.rename('old', 'new');
    expect(fx.defs.isSuspended('new')).toBe(false);
  });

  it('refuses an existing target with already_exists and changes nothing', async () => {
    write('a.yaml', dagYaml('description: a'));
    write('b.yml', dagYaml('description: b'));
    expect(await codeOf(fx.defs.rename('a', 'b'))).toBe('already_exists');
    expect(await codeOf(fx.defs.rename('a', 'a'))).toBe('already_exists');
    expect(files()).toEqual(['a.yaml', 'b.yml']);
    expect(read('a.yaml')).toBe(dagYaml('description: a'));
  });

  it('refuses a bad target with bad_request and a missing source with not_found', async () => {
    write('a.yaml', dagYaml());
    expect(await codeOf(fx.defs.rename('a', 'b c'))).toBe('bad_request');
    expect(await codeOf(fx.defs.rename('a', 'x'.repeat(41)))).toBe('bad_request');
    expect(await codeOf(fx.defs.rename('a', 'search'))).toBe('bad_request');
    expect(await codeOf(fx.defs.rename('missing', 'b'))).toBe('not_found');
    expect(files()).toEqual(['a.yaml']);
  });
});

describe('FsDagStore suspension', () => {
  it('keeps an empty flag file per suspended DAG', async () => {
    write('a.yaml', dagYaml());
    expect(fx.defs.isSuspended('a')).toBe(false);
    await fx.defs.setSuspended('a', true);
    expect(readFileSync(join(fx.suspendDir, 'a.suspend'), 'utf8')).toBe('');
    expect(fx.defs.isSuspended('a')).toBe(true);
    await fx.defs.setSuspended('a', true); // idempotent
    await fx.defs.setSuspended('a', false);
    expect(fx.defs.isSuspended('a')).toBe(false);
    await fx.defs.setSuspended('a', false);
  });

  it('refuses a missing DAG with not_found', async () => {
    expect(await codeOf(fx.defs.setSuspended('missing', true))).toBe('not_found');
    expect(await codeOf(() => fx.defs.isSuspended('missing'))).toBe('not_found');
    expect(existsSync(fx.suspendDir)).toBe(false);
  });
});
