import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NodeStatus } from '@trellis/core';
import { harness } from '../support/harness.js';

describe('variables', () => {
  it('expands named and positional params in the command', async () => {
    const h = harness('params: "pos1 NAME=world"\nsteps:\n  - echo hello ${NAME} $1\n');
    await h.run();
    expect(h.executor.calls[0]?.step.cmdWithArgs).toBe('echo hello world pos1');
  });

  it('gives step processes only PATH, HOME, LANG, TZ, SHELL and SVC_/LC_/DAG_ system variables, plus DAG env and context', async () => {
    const h = harness(
      'env:\n  - GREETING: hi ${HOME}\nparams: [P: v]\nsteps:\n  - {name: a, command: x}\n',
      {},
      {
        systemEnv: {
          PATH: '/bin',
          HOME: '/root',
          SECRET_TOKEN: 's3cr3t',
          LC_ALL: 'C',
          SVC_HOME: '/h',
          OTHER: 'x',
        },
      },
    );
    await h.run();
    const env = h.executor.calls[0]?.env ?? {};
    expect(env).toMatchObject({
      PATH: '/bin',
      HOME: '/root',
      LC_ALL: 'C',
      SVC_HOME: '/h',
      GREETING: 'hi /root',
      P: 'v',
    });
    expect(env.SECRET_TOKEN).toBeUndefined();
    expect(env.OTHER).toBeUndefined();
    expect(env).toMatchObject({
      DAG_NAME: 'test-dag',
      DAG_RUN_ID: 'run-0001',
      DAG_RUN_LOG_FILE: '/logs/run.log',
    });
    expect(env).toMatchObject({
      DAG_RUN_STEP_NAME: 'a',
      DAG_RUN_STEP_STDOUT_FILE: '/logs/a.out',
      DAG_RUN_STEP_STDERR_FILE: '/logs/a.err',
    });
  });

  it('keeps every system variable usable for ${VAR} while the DAG is evaluated', async () => {
    const h = harness('env:\n  - TOKEN: ${SECRET_TOKEN}\nsteps:\n  - {name: a, command: x}\n');
    await h.run();
    expect(h.executor.calls[0]?.env.TOKEN).toBe('s3cr3t');
  });

  it('evaluates DAG env in order, each value seeing the earlier ones, with backticks', async () => {
    const h = harness(
      'env:\n  - A: one\n  - B: ${A}-two\n  - C: "`echo three`"\nsteps:\n  - {name: a, command: x}\n',
      {},
      {
        commands: (c) => ({ exitCode: 0, stdout: c === 'echo three' ? 'three\n' : '' }),
      },
    );
    await h.run();
    expect(h.executor.calls[0]?.env).toMatchObject({ A: 'one', B: 'one-two', C: 'three' });
  });

  it('captures output into a variable that later steps read, also by JSON path', async () => {
    const h = harness(
      'steps:\n  - {name: a, command: x, output: RESULT}\n  - {name: b, command: "echo ${RESULT.items[1].id} ${RESULT}"}\n',
      { a: { output: '  {"items":[{"id":1},{"id":2}]}\n' } },
    );
    const r = await h.run();
    expect(r.nodes[0]?.outputs).toEqual({ RESULT: '{"items":[{"id":1},{"id":2}]}' });
    // A plain value is written in; JSON is left for the shell to expand from the step's own
    // RESULT variable, so its quotes survive (issue #16; it used to be pasted into the text).
    expect(h.executor.calls[1]?.step.cmdWithArgs).toBe('echo 2 ${RESULT}');
    expect(h.executor.calls[1]?.env.RESULT).toBe('{"items":[{"id":1},{"id":2}]}');
  });

  it('shows a step the outputs of its ancestors only', async () => {
    const h = harness(
      'type: graph\nsteps:\n  - {name: a, command: x, output: V}\n  - {name: b, command: "echo ${V}"}\n  - {name: c, command: "echo ${V}", depends: a}\n',
      { a: { output: 'from-a' } },
    );
    await h.run();
    const byName = Object.fromEntries(
      h.executor.calls.map((c) => [c.step.name, c.step.cmdWithArgs]),
    );
    expect(byName.c).toBe('echo from-a');
    expect(byName.b).toBe('echo ${V}');
  });

  it('lets step env override DAG env and see params', async () => {
    const h = harness(
      'env: [X: dag]\nparams: [P: p]\nsteps:\n  - name: a\n    command: x\n    env:\n      X: step-${P}\n',
    );
    await h.run();
    expect(h.executor.calls[0]?.env.X).toBe('step-p');
  });

  it('resolves the step directory against the DAG workingDir', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trellis-wd-'));
    try {
      const h = harness(`workingDir: ${dir}\nsteps:\n  - {name: a, command: x, dir: .}\n`);
      const r = await h.run();
      expect(r.nodes[0]?.status).toBe(NodeStatus.Succeeded);
      expect(h.executor.calls[0]?.cwd).toBe(dir);
      expect(h.executor.calls[0]?.env.PWD).toBe(dir);
    } finally {
      rmSync(dir, { recursive: true });
    }
  });

  it('fails a step whose working directory does not exist, saying so', async () => {
    const h = harness('steps:\n  - {name: a, command: x, dir: /does/not/exist}\n');
    expect((await h.run()).nodes[0]?.error).toBe(
      'working directory /does/not/exist does not exist',
    );
  });
});

describe('dotenv', () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('loads files in order, later overriding earlier, with system variables winning and DAG env winning over files', async () => {
    dir = mkdtempSync(join(tmpdir(), 'trellis-dotenv-'));
    writeFileSync(join(dir, 'a.env'), 'A=1\nB=from-a\nHOME=/evil\nD=file\n');
    writeFileSync(join(dir, 'b.env'), 'B=from-b\nC="quoted value"\n');
    const h = harness(
      `workingDir: ${dir}\ndotenv: [a.env, b.env]\nenv: [D: yaml]\nsteps:\n  - {name: s, command: x}\n`,
    );
    await h.run();
    expect(h.executor.calls[0]?.env).toMatchObject({
      A: '1',
      B: 'from-b',
      C: 'quoted value',
      HOME: '/root',
      D: 'yaml',
    });
  });

  it('loads nothing with dotenv: []', async () => {
    dir = mkdtempSync(join(tmpdir(), 'trellis-dotenv-'));
    writeFileSync(join(dir, '.env'), 'A=1\n');
    const h = harness(`workingDir: ${dir}\ndotenv: []\nsteps:\n  - {name: s, command: x}\n`);
    await h.run();
    expect(h.executor.calls[0]?.env.A).toBeUndefined();
  });

  it('loads .env by default', async () => {
    dir = mkdtempSync(join(tmpdir(), 'trellis-dotenv-'));
    writeFileSync(join(dir, '.env'), 'A=default\n');
    const h = harness(`workingDir: ${dir}\nsteps:\n  - {name: s, command: x}\n`);
    await h.run();
    expect(h.executor.calls[0]?.env.A).toBe('default');
  });
});

describe('parallel items', () => {
  it('runs the step once per static item with ITEM set, at most maxConcurrent at once', async () => {
    let active = 0;
    let peak = 0;
    const h = harness(
      'steps:\n  - {name: a, command: "echo ${ITEM}", parallel: {items: [x, y, z, w], maxConcurrent: 2}}\n',
      {
        a: async (ctx) => {
          active++;
          peak = Math.max(peak, active);
          await new Promise((r) => setImmediate(r));
          active--;
          return { output: ctx.env.ITEM ?? '' };
        },
      },
    );
    const r = await h.run();
    expect(h.executor.calls.map((c) => c.step.cmdWithArgs).sort()).toEqual([
      'echo w',
      'echo x',
      'echo y',
      'echo z',
    ]);
    expect(peak).toBe(2);
    expect(r.nodes[0]).toMatchObject({ status: NodeStatus.Succeeded, doneCount: 1 });
  });

  it('splits a variable reference into items at run time', async () => {
    const h = harness(
      'params: [\'LIST=["a","b"]\']\nsteps:\n  - {name: a, command: "echo ${ITEM}", parallel: "${LIST}"}\n',
    );
    await h.run();
    expect(h.executor.calls.map((c) => c.step.cmdWithArgs).sort()).toEqual(['echo a', 'echo b']);
  });

  it('fails the step when an item fails, naming how many', async () => {
    const h = harness('steps:\n  - {name: a, command: "echo ${ITEM}", parallel: [1, 2, 3]}\n', {
      a: (ctx) => ({ exitCode: ctx.env.ITEM === '2' ? 1 : 0 }),
    });
    const r = await h.run();
    expect(r.nodes[0]?.status).toBe(NodeStatus.Failed);
    expect(r.nodes[0]?.error).toMatch(/^parallel execution failed: 1 of 3 item\(s\) failed/);
  });

  it('fails when a variable yields no items', async () => {
    const h = harness('steps:\n  - {name: a, command: x, parallel: "${NOTHING}"}\n');
    expect((await h.run()).nodes[0]?.error).toBe('parallel has no items');
  });
});
