import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../run-cli.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-validate-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const validate = async (...args: string[]): Promise<{ code: number; out: string[] }> => {
  const out: string[] = [];
  const code = await runCli(['validate', ...args], {
    out: (l) => out.push(...l.split('\n')),
    err: (l) => out.push(...l.split('\n')),
    env: { SVC_HOME: join(dir, 'home'), HOME: dir },
    cwd: dir,
  });
  return { code, out };
};

describe('trellis validate', () => {
  it('says a directory is not a DAG file and exits 1', async () => {
    mkdirSync(join(dir, 'dags-here'));
    expect(await validate('dags-here')).toEqual({
      code: 1,
      out: ['dags-here: is a directory, not a DAG file'],
    });
  });

  it('gives no line for a bad DAG name that comes from the file name', async () => {
    writeFileSync(join(dir, 'bad name.yaml'), '# no name here\nsteps:\n  - echo hi\n');
    expect(await validate('bad name.yaml')).toEqual({
      code: 1,
      out: [
        'bad name.yaml: invalid DAG name "bad name": use letters, digits, "_", "." or "-" (max 40); it comes from the file name, so rename the file or add name: <name>',
      ],
    });
  });
});
