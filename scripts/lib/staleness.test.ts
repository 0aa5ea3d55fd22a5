import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { globToRegExp, markBuilt, staleBuilds } from './staleness.mjs';

let root: string;

/** Writes `file` under root with its modification time `age` seconds in the past. */
const put = (file: string, age: number, text = '') => {
  const path = join(root, file);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  const t = Date.now() / 1000 - age;
  utimesSync(path, t, t);
};

/** A repository in miniature: one tsc package `a` and the web UI, all sources 100 s old. */
const sources = () => {
  put(
    'tsconfig.json',
    100,
    JSON.stringify({ references: [{ path: 'packages/a/tsconfig.build.json' }] }),
  );
  put('tsconfig.base.json', 100);
  put('pnpm-lock.yaml', 100);
  put(
    'packages/a/tsconfig.build.json',
    100,
    JSON.stringify({
      compilerOptions: { tsBuildInfoFile: 'dist/.tsbuildinfo' },
      include: ['src'],
      exclude: ['src/**/*.test.ts', 'src/testing/**'],
    }),
  );
  put('packages/a/package.json', 100);
  put('packages/a/src/index.ts', 100);
  put('packages/a/src/deep/x.ts', 100);
  put('packages/contract/src/wire.ts', 100);
  for (const f of ['index.html', 'vite.config.ts', 'package.json', 'src/main.tsx'])
    put(`packages/web/${f}`, 100);
};

const built = () => {
  put('packages/a/dist/.tsbuildinfo', 50);
  put('packages/web/dist/index.html', 50);
};

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'trellis-staleness-'));
  sources();
});

afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('staleBuilds', () => {
  it('finds a fresh clone (no build output) stale on both sides', () => {
    expect(staleBuilds(root)).toEqual({
      tsc: 'packages/a is not built',
      web: 'packages/web is not built',
    });
  });

  it('finds nothing to do when every output is newer than its sources', () => {
    built();
    expect(staleBuilds(root)).toEqual({ tsc: undefined, web: undefined });
  });

  it('finds the tsc build stale when a source file changed, however deep', () => {
    built();
    put('packages/a/src/deep/x.ts', 10);
    expect(staleBuilds(root)).toEqual({
      tsc: 'packages/a has sources newer than its build',
      web: undefined,
    });
  });

  it('ignores files the build excludes (tests, src/testing)', () => {
    built();
    put('packages/a/src/deep/x.test.ts', 10);
    put('packages/a/src/testing/fake.ts', 10);
    expect(staleBuilds(root)).toEqual({ tsc: undefined, web: undefined });
  });

  it('finds the web build stale when its sources or the contract it bundles changed', () => {
    built();
    put('packages/web/src/main.tsx', 10);
    expect(staleBuilds(root).web).toBe('packages/web has sources newer than its build');
    put('packages/web/dist/index.html', 5);
    expect(staleBuilds(root).web).toBeUndefined();
    put('packages/contract/src/wire.ts', 1);
    expect(staleBuilds(root).web).toBe('packages/web has sources newer than its build');
  });

  it('finds both stale after the lockfile changed (dependencies moved)', () => {
    built();
    put('pnpm-lock.yaml', 10);
    expect(staleBuilds(root)).toEqual({
      tsc: 'packages/a has sources newer than its build',
      web: 'packages/web has sources newer than its build',
    });
  });
});

describe('markBuilt', () => {
  it('marks a build current after tsc -b changed nothing for a newer package.json', () => {
    built();
    put('packages/a/package.json', 10);
    expect(staleBuilds(root).tsc).toBe('packages/a has sources newer than its build');
    markBuilt(root, new Date(Date.now() - 5000));
    expect(staleBuilds(root).tsc).toBeUndefined();
  });

  it('never marks a source changed after the build started', () => {
    built();
    put('packages/a/src/index.ts', 1);
    markBuilt(root, new Date(Date.now() - 5000));
    expect(staleBuilds(root).tsc).toBe('packages/a has sources newer than its build');
  });
});

describe('globToRegExp', () => {
  it('matches tsconfig exclude patterns on package-relative paths', () => {
    const tests = globToRegExp('src/**/*.test.ts');
    expect(tests.test('src/a.test.ts')).toBe(true);
    expect(tests.test('src/x/y/a.test.ts')).toBe(true);
    expect(tests.test('src/a.ts')).toBe(false);
    expect(tests.test('src/atest.ts')).toBe(false);
    const testing = globToRegExp('src/testing/**');
    expect(testing.test('src/testing/a/b.ts')).toBe(true);
    expect(testing.test('src/testingx/b.ts')).toBe(false);
  });
});
