import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAlive, TextSink } from '../test-support/text-sink.js';
import { NodeProcessRunner } from './node-process-runner.js';

const env = { PATH: '/usr/local/bin:/usr/bin:/bin' };
const runner = new NodeProcessRunner();
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'trellis-runner-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const sh = (script: string, cwd = dir) => {
  const io = { stdout: new TextSink(), stderr: new TextSink() };
  const proc = runner.start({ command: '/bin/sh', args: ['-c', script], cwd, env }, io);
  return { proc, ...io };
};

describe('node process runner', () => {
  it('reports the exit code and passes stdout and stderr on', async () => {
    const { proc, stdout, stderr } = sh('echo out; echo err >&2; exit 5');
    expect(await proc.exited).toEqual({ exitCode: 5, signal: null });
    expect([stdout.text, stderr.text]).toEqual(['out\n', 'err\n']);
  });

  it('starts the process as the leader of its own process group', async () => {
    const { proc, stdout } = sh('ps -o pgid= -p $$');
    await proc.exited;
    expect(Number(stdout.text.trim())).toBe(proc.pid);
  });

  it('signals the whole process group, background children included', async () => {
    const { proc, stdout } = sh('sleep 1000 & echo "bg $!"; wait');
    await stdout.until('\n');
    const bg = Number(/bg (\d+)/.exec(stdout.text)?.[1]);
    proc.kill('SIGTERM');
    expect(await proc.exited).toEqual({ exitCode: null, signal: 'SIGTERM' });
    expect(isAlive(bg)).toBe(false);
  });

  it('ignores a kill after the process group is gone', async () => {
    const { proc } = sh('true');
    await proc.exited;
    expect(() => proc.kill('SIGTERM')).not.toThrow();
  });

  it('resolves a failed spawn with exit code 127 and a message instead of rejecting', async () => {
    const io = { stdout: new TextSink(), stderr: new TextSink() };
    const proc = runner.start({ command: '/no/such/program', args: [], cwd: dir, env }, io);
    expect(proc.pid).toBeUndefined();
    expect(await proc.exited).toEqual({ exitCode: 127, signal: null });
    expect(io.stderr.text).toBe(
      'trellis: cannot start /no/such/program: no such file or interpreter (ENOENT)\n',
    );
  });

  it('says so when the working directory is missing', async () => {
    const { proc, stderr } = sh('true', join(dir, 'gone'));
    expect(await proc.exited).toEqual({ exitCode: 127, signal: null });
    expect(stderr.text).toContain(`working directory ${join(dir, 'gone')} does not exist`);
  });

  it('resolves a synchronous spawn refusal (NUL in an argument) the same way', async () => {
    const io = { stdout: new TextSink(), stderr: new TextSink() };
    const proc = runner.start({ command: '/bin/echo', args: ['a\0b'], cwd: dir, env }, io);
    expect(await proc.exited).toEqual({ exitCode: 127, signal: null });
    expect(io.stderr.text).toContain('trellis: cannot start /bin/echo');
  });

  it('never ends the streams it was given', async () => {
    const { proc, stdout, stderr } = sh('echo x');
    await proc.exited;
    expect([stdout.writableEnded, stderr.writableEnded]).toEqual([false, false]);
  });
});
