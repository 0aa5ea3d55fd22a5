import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cliIn } from '../test/support/cli-in.js';
import { COMMANDS } from './commands/registry.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-cli-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const cli = (args: string[]) => cliIn(dir, args);

const write = (name: string, text: string): string => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};

describe('trellis --help', () => {
  it('lists every subcommand the spec names plus the service roles and run commands', async () => {
    const { code, out } = await cli(['--help']);
    expect(code).toBe(0);
    const listed = out.filter((l) => l.startsWith('  ')).map((l) => l.trim().split(/\s{2,}/)[0]);
    for (const name of [
      'validate',
      'start',
      'enqueue',
      'dequeue',
      'migrate history',
      'start-all',
      'server',
      'scheduler',
      'coordinator',
      'worker',
      'status',
      'stop',
      'retry',
      'restart',
      'dry',
    ]) {
      expect(listed).toContain(name);
    }
  });

  it('lists each command once with its summary', async () => {
    const { out } = await cli(['--help']);
    for (const c of COMMANDS) {
      const lines = out.filter((l) => l.trim().startsWith(`${c.name} `));
      expect(lines, c.name).toEqual([expect.stringContaining(c.summary)]);
    }
    expect(out.join('\n')).not.toMatch(/not built yet/);
  });

  it('prints help to stderr and exits 2 when no command is given', async () => {
    const { code, err } = await cli([]);
    expect(code).toBe(2);
    expect(err.join('\n')).toMatch(/usage: trellis <command>/);
  });
});

describe('unknown commands', () => {
  it('an unknown command exits 2 and points at --help', async () => {
    const { code, err } = await cli(['frobnicate']);
    expect(code).toBe(2);
    expect(err.join('\n')).toMatch(/unknown command "frobnicate"/);
  });
});

describe('trellis validate', () => {
  it('prints one line per valid file and exits 0', async () => {
    const a = write('a.yaml', 'steps:\n  - echo a\n');
    const b = write(
      'b.yaml',
      'name: bee\nsteps:\n  - echo b\n---\nname: sub\nsteps:\n  - echo s\n',
    );
    const { code, out } = await cli(['validate', a, b]);
    expect(code).toBe(0);
    expect(out).toEqual([`${a}: valid (DAG "a")`, `${b}: valid (DAGs "bee", "sub")`]);
  });

  it('prints every problem of an invalid file on its own line, prefixed by the file, and exits 1', async () => {
    const bad = write(
      'bad.yaml',
      'name: ok\nmaxActiveRuns: 0\nsteps:\n  - name: a\n    comand: echo\n    depends: nope\n',
    );
    const good = write('good.yaml', 'steps:\n  - echo fine\n');
    const { code, out } = await cli(['validate', bad, good]);
    expect(code).toBe(1);
    expect(out).toEqual([
      `${bad}: line 2: maxActiveRuns: must be -1 (unlimited) or an integer of at least 1, got 0`,
      `${bad}: line 4: steps[0]: a step has nothing to run: set command, script or run`,
      `${bad}: line 5: steps[0].comand: unknown field "comand" in a step: did you mean "command"?`,
      `${bad}: line 6: steps[0].depends: step "a" depends on unknown step "nope"`,
      `${good}: valid (DAG "good")`,
    ]);
  });

  it('reports a YAML syntax error with its line and column', async () => {
    const f = write('syntax.yaml', 'steps:\n  - [echo a\n');
    const { code, out } = await cli(['validate', f]);
    expect(code).toBe(1);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatch(new RegExp(`^${f}: line \\d+, column \\d+: YAML syntax error: `));
  });

  it('finds a DAG by name in the DAGs folder and checks run targets there', async () => {
    const dags = join(dir, 'dags');
    mkdirSync(dags);
    writeFileSync(join(dags, 'child.yaml'), 'steps:\n  - echo child\n');
    writeFileSync(join(dags, 'parent.yaml'), 'steps:\n  - run: child\n  - run: ghost\n');
    const { code, out } = await cli(['validate', '--dags', dags, 'parent', 'child']);
    expect(code).toBe(1);
    expect(out).toEqual([
      'parent: line 3: steps[1].run: child DAG "ghost" is neither in this file nor in the DAGs folder: check the name, or create it',
      'child: valid (DAG "child")',
    ]);
  });

  it('says when a file does not exist and exits 1', async () => {
    const { code, out } = await cli(['validate', 'missing.yaml']);
    expect(code).toBe(1);
    expect(out[0]).toMatch(/^missing\.yaml: no such file, and no DAG of that name in /);
  });

  it('exits 2 with usage when no file is named or a flag is unknown', async () => {
    expect((await cli(['validate'])).code).toBe(2);
    const r = await cli(['validate', '--bogus', 'x.yaml']);
    expect(r.code).toBe(2);
    expect(r.err.join('\n')).toMatch(/usage: trellis validate/);
  });
});
