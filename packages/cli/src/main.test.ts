import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { processIo, userCwd } from './main.js';
import { runCli } from './run-cli.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-main-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('userCwd', () => {
  it('is INIT_CWD when run as `pnpm trellis`', () => {
    expect(userCwd({ npm_lifecycle_event: 'trellis', INIT_CWD: '/home/u/dags' }, '/repo')).toBe(
      '/home/u/dags',
    );
  });

  it('is the process directory otherwise', () => {
    expect(userCwd({ INIT_CWD: '/home/u/dags' }, '/repo')).toBe('/repo');
    expect(userCwd({ npm_lifecycle_event: 'test', INIT_CWD: '/home/u/dags' }, '/repo')).toBe(
      '/repo',
    );
    expect(userCwd({ npm_lifecycle_event: 'trellis' }, '/repo')).toBe('/repo');
  });
});

describe('the process io', () => {
  /** Runs `trellis validate a.yaml` with the process in `repo` and the user in `user`. */
  const validateFromRepo = async (env: Record<string, string>) => {
    const user = join(dir, 'user');
    const repo = join(dir, 'repo');
    mkdirSync(user);
    mkdirSync(repo);
    writeFileSync(join(user, 'a.yaml'), 'steps:\n  - echo a\n');
    let out = '';
    const io = processIo({
      env: { SVC_HOME: join(dir, 'home'), HOME: dir, ...env, INIT_CWD: user },
      cwd: repo,
      stdout: { write: (t: string) => (out += t) },
      stderr: { write: (t: string) => (out += t) },
    });
    const code = await runCli(['validate', 'a.yaml'], io);
    return { code, out };
  };

  it('resolves relative paths against the directory the user ran `pnpm trellis` in', async () => {
    expect(await validateFromRepo({ npm_lifecycle_event: 'trellis' })).toEqual({
      code: 0,
      out: 'a.yaml: valid (DAG "a")\n',
    });
  });

  it('resolves them against the process directory for a direct `trellis`', async () => {
    const r = await validateFromRepo({});
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^a\.yaml: no such file/);
  });
});
