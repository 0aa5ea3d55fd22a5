import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NodeStatus } from '@trellis/core';
import { harness } from '../support/harness.js';

// `~` in the paths a DAG names means the home directory of the user running the step.
describe('~ in paths', () => {
  let home: string;
  let other: string;
  const sys = (): Record<string, string> => ({ PATH: '/usr/bin:/bin', HOME: home });

  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'trellis-home-'));
    other = mkdtempSync(join(tmpdir(), 'trellis-home2-'));
    mkdirSync(join(home, 'work'));
    mkdirSync(join(other, 'work'));
  });
  afterEach(() => {
    rmSync(home, { recursive: true, force: true });
    rmSync(other, { recursive: true, force: true });
  });

  it('expands a written ~/dir against HOME', async () => {
    const h = harness('steps:\n  - {name: a, command: x, dir: ~/work}\n', {}, { systemEnv: sys() });
    const r = await h.run();
    expect(r.nodes[0]?.error ?? '').toBe('');
    expect(h.executor.calls[0]?.cwd).toBe(join(home, 'work'));
    expect(h.executor.calls[0]?.env.PWD).toBe(join(home, 'work'));
  });

  it('expands ~ that comes from a DAG env value and from a param', async () => {
    const h = harness(
      'env:\n  - WORK: ~/work\nparams: [TOP: "~"]\nsteps:\n  - {name: a, command: x, dir: $WORK}\n  - {name: b, command: x, dir: "${TOP}"}\n',
      {},
      { systemEnv: sys() },
    );
    const r = await h.run();
    expect(r.nodes.map((n) => n.status)).toEqual([NodeStatus.Succeeded, NodeStatus.Succeeded]);
    expect(h.executor.calls.map((c) => c.cwd)).toEqual([join(home, 'work'), home]);
  });

  it("uses the HOME the step's own env sets", async () => {
    const h = harness(
      `steps:\n  - name: a\n    command: x\n    dir: ~/work\n    env:\n      - HOME: ${other}\n`,
      {},
      { systemEnv: sys() },
    );
    await h.run();
    expect(h.executor.calls[0]?.cwd).toBe(join(other, 'work'));
    expect(h.executor.calls[0]?.env.PWD).toBe(join(other, 'work'));
  });

  it('expands ~ in the DAG workingDir, which relative step dirs build on', async () => {
    const h = harness(
      'workingDir: ~/work\nsteps:\n  - {name: a, command: x}\n',
      {},
      {
        systemEnv: sys(),
      },
    );
    await h.run();
    expect(h.executor.calls[0]?.cwd).toBe(join(home, 'work'));
  });

  it('leaves ~user and an inner ~ alone (they name other directories)', async () => {
    const h = harness(
      `workingDir: ${home}\nsteps:\n  - {name: a, command: x, dir: a/~}\n`,
      {},
      {
        systemEnv: sys(),
      },
    );
    const r = await h.run();
    expect(r.nodes[0]?.error).toBe(`working directory ${join(home, 'a', '~')} does not exist`);
  });

  it("starts steps in HOME when the DAG file's folder is not on this host (a worker), saying so", async () => {
    mkdirSync(join(home, 'sub'));
    const h = harness(
      'steps:\n  - {name: a, command: x}\n  - {name: b, command: x, dir: sub}\n',
      {},
      { systemEnv: sys(), location: '/coordinator/only/dags/d.yaml' },
    );
    await h.run();
    expect(h.executor.calls.map((c) => c.cwd)).toEqual([home, join(home, 'sub')]);
    expect(h.recorder.lines.join('\n')).toContain(
      `the DAG file's folder /coordinator/only/dags is not on this host: steps start in ${home}`,
    );
  });

  it('keeps a written workingDir that is missing, and fails its steps naming it', async () => {
    const h = harness(
      'workingDir: /coordinator/only/work\nsteps:\n  - {name: a, command: x}\n',
      {},
      { systemEnv: sys(), location: '/coordinator/only/dags/d.yaml' },
    );
    const r = await h.run();
    expect(r.nodes[0]?.error).toBe('working directory /coordinator/only/work does not exist');
  });

  it('reads a dotenv file named ~/x.env', async () => {
    writeFileSync(join(home, 'x.env'), 'FROM_DOTENV=yes\n');
    const h = harness(
      'dotenv: ~/x.env\nsteps:\n  - {name: a, command: x}\n',
      {},
      {
        systemEnv: sys(),
      },
    );
    await h.run();
    expect(h.executor.calls[0]?.env.FROM_DOTENV).toBe('yes');
  });
});
