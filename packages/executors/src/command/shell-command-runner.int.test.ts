import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { ShellCommandRunner } from './shell-command-runner.js';

const opts = { cwd: tmpdir(), env: { PATH: '/usr/bin:/bin', GREETING: 'hi' }, shell: 'sh' };

describe('ShellCommandRunner', () => {
  it('returns the exit code and stdout of a command, with the given environment', async () => {
    const r = await new ShellCommandRunner().run(
      'echo "$GREETING there"; echo err >&2; exit 3',
      opts,
    );
    expect(r).toEqual({ exitCode: 3, stdout: 'hi there\n' });
  });

  it('runs in the given directory', async () => {
    expect((await new ShellCommandRunner().run('pwd', { ...opts, cwd: '/' })).stdout).toBe('/\n');
  });

  it('kills an aborted command and reports exit code 130 or the signal exit', async () => {
    const ac = new AbortController();
    const running = new ShellCommandRunner().run('echo started; sleep 30', {
      ...opts,
      abort: ac.signal,
    });
    setImmediate(() => ac.abort());
    const r = await running;
    expect(r.exitCode).not.toBe(0);
  });

  it('accepts a shell with arguments', async () => {
    const r = await new ShellCommandRunner().run('false | true', {
      ...opts,
      shell: 'bash -o pipefail',
    });
    expect(r.exitCode).toBe(1);
  });
});
