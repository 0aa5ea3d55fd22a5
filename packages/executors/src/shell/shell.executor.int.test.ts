import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NodeProcessRunner } from '../process-runner/node-process-runner.js';
import { stepContext, type ContextSetup } from '../../test/support/exec-context.js';
import { isAlive } from '../../test/support/text-sink.js';
import { ShellExecutor } from './shell.executor.js';

const executor = new ShellExecutor();
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'trellis-shell-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** An ExecContext for one step written as in a DAG file (so the spec package compiles it). */
const contextFor = (stepFields: Record<string, unknown>, setup: ContextSetup = {}) =>
  stepContext(stepFields, dir, setup);

const scriptFilesIn = async (d: string) =>
  (await readdir(d)).filter((n) => n.startsWith('trellis-script-'));

describe('shell executor: commands', () => {
  it.each([
    ['true', 0],
    ['false', 1],
    ['exit 3', 3],
  ])('reports the exit code of %s as data', async (command, exitCode) => {
    const { ctx } = contextFor({ command });
    expect(await executor.run(ctx)).toMatchObject({ exitCode, signal: null });
  });

  it('passes the environment and the working directory', async () => {
    const { ctx, out } = contextFor(
      { command: 'echo "$GREETING from $(pwd)"' },
      { env: { GREETING: 'hi' } },
    );
    await executor.run(ctx);
    expect(out.text).toBe(`hi from ${dir}\n`);
  });

  it('runs the default shell with -e, so a failing first command stops the rest', async () => {
    const { ctx, out } = contextFor({ command: 'false; echo after' });
    expect(await executor.run(ctx)).toMatchObject({ exitCode: 1 });
    expect(out.text).toBe('');
  });

  it('runs a shell named by the step without -e', async () => {
    const { ctx, out } = contextFor({ command: 'false; echo after', shell: '/bin/sh' });
    expect(await executor.run(ctx)).toMatchObject({ exitCode: 0 });
    expect(out.text).toBe('after\n');
  });

  it('passes the arguments of a step shell such as "bash -o pipefail"', async () => {
    const piped = contextFor({ command: 'false | true', shell: 'bash -o pipefail' });
    expect(await executor.run(piped.ctx)).toMatchObject({ exitCode: 1 });
    const plain = contextFor({ command: 'false | true' });
    expect(await executor.run(plain.ctx)).toMatchObject({ exitCode: 0 });
  });
});

describe('shell executor: scripts', () => {
  it('runs a multi-line command as a script whose last command sets the exit code', async () => {
    const { ctx, out } = contextFor({ command: 'X=hello\nfalse\necho "$X world"\nexit 4\n' });
    expect(await executor.run(ctx)).toMatchObject({ exitCode: 4, signal: null });
    expect(out.text).toBe('hello world\n');
  });

  it('honours a shebang line', async () => {
    const { ctx, out } = contextFor({ script: '#!/usr/bin/env python3\nprint(6 * 7)\n' });
    expect(await executor.run(ctx)).toMatchObject({ exitCode: 0 });
    expect(out.text).toBe('42\n');
  });

  it('ignores the shebang when the step names a shell', async () => {
    const { ctx, out } = contextFor({
      script: '#!/usr/bin/env python3\necho from sh\n',
      shell: 'sh',
    });
    expect(await executor.run(ctx)).toMatchObject({ exitCode: 0 });
    expect(out.text).toBe('from sh\n');
  });

  it('runs command and script as <command> <args> <file>', async () => {
    const { ctx, out } = contextFor({
      command: 'python3 -u',
      script: 'import sys\nprint(sys.argv[0][-30:] != "")\n',
    });
    expect(await executor.run(ctx)).toMatchObject({ exitCode: 0 });
    expect(out.text).toBe('True\n');
  });

  it('writes the script with mode 0700 into the working directory and removes it afterwards', async () => {
    const { ctx, out } = contextFor({ script: 'stat -c %a "$0"\necho "$0"\n' });
    expect(await executor.run(ctx)).toMatchObject({ exitCode: 0 });
    const [mode, path] = out.text.trim().split('\n');
    expect(mode).toBe('700');
    expect(path?.startsWith(join(dir, 'trellis-script-'))).toBe(true);
    expect(existsSync(path ?? '')).toBe(false);
  });

  it('writes the script to the temp directory when the working directory is not writable', async () => {
    // /proc refuses new files even for root.
    const { ctx, out } = contextFor({ script: 'echo "$0"\n' }, { cwd: '/proc' });
    expect(await executor.run(ctx)).toMatchObject({ exitCode: 0 });
    const path = out.text.trim();
    expect(path.startsWith(join(tmpdir(), 'trellis-script-'))).toBe(true);
    expect(existsSync(path)).toBe(false);
  });
});

describe('shell executor: failures are data', () => {
  it('reports a missing shebang interpreter as exit code 127 with a message', async () => {
    const { ctx, err } = contextFor({ script: '#!/no/such/interpreter\necho hi\n' });
    const outcome = await executor.run(ctx);
    expect(outcome).toMatchObject({ exitCode: 127, signal: null });
    expect(outcome.pid).toBeUndefined();
    expect(err.text).toContain('cannot start /no/such/interpreter: no such file or interpreter');
    expect(await scriptFilesIn(dir)).toEqual([]);
  });

  it('reports a missing step shell as exit code 127', async () => {
    const { ctx, err } = contextFor({ command: 'echo hi', shell: '/no/such/shell -x' });
    expect(await executor.run(ctx)).toMatchObject({ exitCode: 127 });
    expect(err.text).toContain('cannot start /no/such/shell');
  });

  it('reports a missing working directory', async () => {
    const missing = join(dir, 'missing');
    const { ctx, err } = contextFor({ command: 'true' }, { cwd: missing });
    expect(await executor.run(ctx)).toMatchObject({ exitCode: 127 });
    expect(err.text).toContain(`working directory ${missing} does not exist`);
  });

  it('reports a redirect file that cannot be opened without starting anything', async () => {
    const { ctx } = contextFor({ command: 'true', stdout: 'no/such/dir/out.txt' });
    const outcome = await executor.run(ctx);
    expect(outcome).toMatchObject({ exitCode: null, signal: null });
    expect(outcome.error).toContain(
      `cannot open the stdout file ${join(dir, 'no/such/dir/out.txt')}`,
    );
  });
});

describe('shell executor: output', () => {
  it('copies stdout and stderr to the redirect files, appending, created 0600', async () => {
    await writeFile(join(dir, 'out.txt'), 'earlier\n');
    const { ctx, out, err } = contextFor({
      command: 'echo to-out; echo to-err >&2',
      stdout: 'out.txt',
      stderr: 'err.txt',
    });
    expect(await executor.run(ctx)).toMatchObject({ exitCode: 0 });
    expect([out.text, err.text]).toEqual(['to-out\n', 'to-err\n']);
    expect(await readFile(join(dir, 'out.txt'), 'utf8')).toBe('earlier\nto-out\n');
    expect(await readFile(join(dir, 'err.txt'), 'utf8')).toBe('to-err\n');
    expect((await stat(join(dir, 'err.txt'))).mode & 0o777).toBe(0o600);
  });

  it('captures stdout (not stderr) when a capture limit is set', async () => {
    const { ctx } = contextFor({ command: 'echo captured; echo not >&2' }, { captureLimit: 100 });
    expect(await executor.run(ctx)).toMatchObject({ output: 'captured\n', outputExceeded: false });
  });

  it('reports output beyond the capture limit while the log still gets every byte', async () => {
    const bytes = 1_000_000;
    const { ctx, out } = contextFor(
      { command: `head -c ${bytes} /dev/zero | tr '\\0' a` },
      { captureLimit: 1024 },
    );
    const outcome = await executor.run(ctx);
    expect(outcome).toMatchObject({ exitCode: 0, outputExceeded: true });
    expect(outcome.output).toBe('a'.repeat(1024));
    expect(out.text.length).toBe(bytes);
  });

  it('streams 50 MB of output to the log file with flat memory', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const live = (): number => {
      gc();
      const m = process.memoryUsage();
      return m.heapUsed + m.arrayBuffers;
    };
    const total = 50 * 1024 * 1024;
    const logPath = join(dir, 'step.out');
    const file = (await import('node:fs')).createWriteStream(logPath);
    let seen = 0;
    let nextSample = 0;
    let peak = 0;
    const baseline = live();
    // The step's log stream: forwards to the file, sampling live memory every 5 MB.
    const log = new Writable({
      write(chunk: Buffer, _e, done) {
        seen += chunk.length;
        if (seen >= nextSample) {
          peak = Math.max(peak, live() - baseline);
          nextSample += 5 * 1024 * 1024;
        }
        if (file.write(chunk)) done();
        else file.once('drain', done);
      },
    });
    const { ctx } = contextFor({ command: `head -c ${total} /dev/zero` }, { stdout: log });
    expect(await executor.run(ctx)).toMatchObject({ exitCode: 0 });
    await new Promise<void>((resolve) => file.end(resolve));
    expect(seen).toBe(total);
    expect((await stat(logPath)).size).toBe(total);
    expect(peak).toBeLessThan(8 * 1024 * 1024);
  });
});

describe('shell executor: signals and stop', () => {
  it('reports a step killed by a signal, with the process group given to onStart first', async () => {
    const { ctx, out } = contextFor({ script: 'echo ready\nsleep 1000\n' });
    const started: number[] = [];
    const running = executor.run(ctx, (pid) => started.push(pid));
    await out.until('ready');
    const [pgid] = started;
    if (pgid === undefined) throw new Error('onStart was not called');
    process.kill(-pgid, 'SIGKILL');
    expect(await running).toEqual({ exitCode: null, signal: 'SIGKILL', pid: pgid });
    expect(await scriptFilesIn(dir)).toEqual([]);
  });

  it('sends signalOnStop to the whole process group on stop', async () => {
    const { ctx, out, stopper } = contextFor(
      {
        script: [
          `trap 'echo "trapped INT"; exit 3' INT`,
          // A grandchild in the foreground: it prints its pid, then becomes `sleep`.
          `sh -c 'echo "grandchild $$"; exec sleep 1000'`,
          'echo not reached',
        ].join('\n'),
      },
      { signal: 'SIGINT' },
    );
    const running = executor.run(ctx);
    await out.until('\n');
    const grandchild = Number(/grandchild (\d+)/.exec(out.text)?.[1]);
    expect(isAlive(grandchild)).toBe(true);
    stopper.abort();
    expect(await running).toMatchObject({ exitCode: 3, signal: null });
    expect(out.text).toContain('trapped INT');
    expect(out.text).not.toContain('not reached');
    expect(isAlive(grandchild)).toBe(false);
  });

  it('kills a step that ignores the stop signal with SIGKILL after the grace period', async () => {
    // A loop without child processes, so the shell runs its trap as soon as TERM arrives.
    const { ctx, out, stopper } = contextFor(
      { script: `trap 'echo "got TERM"' TERM\necho ready\nwhile :; do :; done\n` },
      { signal: 'SIGTERM', graceMs: 500 },
    );
    const running = executor.run(ctx);
    await out.until('ready');
    stopper.abort();
    expect(await running).toMatchObject({ exitCode: null, signal: 'SIGKILL' });
    expect(out.text).toBe('ready\ngot TERM\n');
  });

  it('starts nothing when the step is stopped before it starts', async () => {
    const { ctx, stopper } = contextFor({ command: 'touch started' });
    stopper.abort();
    const started: number[] = [];
    const outcome = await executor.run(ctx, (pid) => started.push(pid));
    expect(outcome).toEqual({
      exitCode: null,
      signal: null,
      error: 'the step was stopped before it started',
    });
    expect(started).toEqual([]);
    expect(existsSync(join(dir, 'started'))).toBe(false);
  });

  it('returns when the command exits even if a background process keeps its output open', async () => {
    const quick = new ShellExecutor({ processes: new NodeProcessRunner({ outputDrainMs: 100 }) });
    const { ctx, out } = contextFor({ command: 'sleep 1000 & echo started' });
    const started: number[] = [];
    const outcome = await quick.run(ctx, (pid) => started.push(pid));
    const [pgid] = started;
    if (pgid !== undefined) process.kill(-pgid, 'SIGKILL'); // the background sleep
    expect(outcome).toMatchObject({ exitCode: 0, signal: null });
    expect(out.text).toBe('started\n');
  });
});

describe('shell executor: ~ is the home directory of the step (its HOME)', () => {
  let home: string;
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'trellis-shell-home-'));
    await mkdir(join(home, 'bin'));
    await writeFile(join(home, 'bin', 'interp'), '#!/bin/sh\necho "interp ran $1"\n', {
      mode: 0o755,
    });
    await writeFile(join(home, 'bin', 'hello.sh'), '#!/bin/sh\necho hello from home\n', {
      mode: 0o755,
    });
  });
  afterEach(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it('runs a script through a ~/ interpreter and writes stdout to a ~/ file', async () => {
    const { ctx, out } = contextFor(
      { command: '~/bin/interp', script: 'ignored body', stdout: '~/out.txt' },
      { env: { HOME: home } },
    );
    expect(await executor.run(ctx)).toMatchObject({ exitCode: 0 });
    expect(out.text).toMatch(/^interp ran \S+trellis-script-/);
    expect(await readFile(join(home, 'out.txt'), 'utf8')).toBe(out.text);
  });

  it('runs a script that names a ~/ path', async () => {
    const { ctx, out } = contextFor({ script: '~/bin/hello.sh' }, { env: { HOME: home } });
    expect(await executor.run(ctx)).toMatchObject({ exitCode: 0 });
    expect(out.text).toBe('hello from home\n');
  });
});
