import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const bin = join(root, 'packages', 'cli', 'bin', 'trellis.js');
const fixtures = join(root, 'packages', 'spec', 'test', 'fixtures');
const home = mkdtempSync(join(tmpdir(), 'trellis-e2e-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

/** Runs the built `trellis` binary as a user would, with a private SVC_HOME. */
const trellis = (args: string[], cwd: string) =>
  spawnSync(process.execPath, [bin, ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, SVC_HOME: home },
  });

const yamlIn = (dir: string): string[] =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort();
const linesOf = (text: string): string[] => text.split('\n').filter((l) => l !== '');

describe('trellis validate (the built binary) over the fixture suite', () => {
  it('accepts every valid fixture with one line each and exit 0', () => {
    const dir = join(fixtures, 'valid');
    const files = yamlIn(dir);
    const r = trellis(['validate', ...files], dir);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const out = linesOf(r.stdout);
    expect(out).toHaveLength(files.length);
    files.forEach((f, i) =>
      expect(out[i]).toMatch(
        new RegExp(`^${f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: valid \\(DAGs? "`),
      ),
    );
  });

  it('reports exactly the expected problems of every invalid fixture, prefixed by the file, with exit 1', () => {
    const dir = join(fixtures, 'invalid');
    const files = yamlIn(dir);
    const r = trellis(['validate', ...files], dir);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(1);
    const out = linesOf(r.stdout);
    let consumed = 0;
    for (const f of files) {
      const expected = linesOf(
        readFileSync(join(dir, f.replace(/\.yaml$/, '.problems.txt')), 'utf8'),
      ).map((p) => `${f}: ${p}`);
      const got = out.filter((l) => l.startsWith(`${f}: `));
      expect(got, f).toEqual(expected);
      consumed += got.length;
    }
    expect(consumed).toBe(out.length);
  });

  it('exits 1 for one invalid file among valid ones', () => {
    const valid = join(fixtures, 'valid');
    const invalidFile = join(fixtures, 'invalid', yamlIn(join(fixtures, 'invalid'))[0] ?? '');
    const r = trellis(['validate', yamlIn(valid)[0] ?? '', invalidFile], valid);
    expect(r.status).toBe(1);
  });
});

describe('trellis --help and usage errors (the built binary)', () => {
  it('lists the commands and exits 0', () => {
    const r = trellis(['--help'], root);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^\s+migrate history\s+/m);
  });

  it('refuses an unknown option with exit 2, naming it', () => {
    const r = trellis(['scheduler', '--frobnicate'], root);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/frobnicate/);
  });
});
