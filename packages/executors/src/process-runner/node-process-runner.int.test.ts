import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ProcessRunner } from '@trellis/core';
import { isAlive, TextSink } from '../../test/support/text-sink.js';
import { NodeProcessRunner } from './node-process-runner.js';
import { SpawnerProcessRunner } from './spawner-process-runner.js';
import { SwitchingProcessRunner } from './switching-process-runner.js';

const env = { PATH: '/usr/local/bin:/usr/bin:/bin' };
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'trellis-runner-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The same behaviour from both runners: spawning here, and spawning in the spawner process. */
describe.each([
  {
    kind: 'node process runner',
    file: 'node-process-runner.ts',
    className: 'NodeProcessRunner',
    make: () => new NodeProcessRunner(),
  },
  {
    kind: 'spawner process runner',
    file: 'spawner-process-runner.ts',
    className: 'SpawnerProcessRunner',
    make: () => new SpawnerProcessRunner(),
  },
  {
    // the one-shot CLI's: the tests after the second run their processes through the spawner
    kind: 'switching process runner',
    file: 'switching-process-runner.ts',
    className: 'SwitchingProcessRunner',
    make: () => new SwitchingProcessRunner({ directStarts: 2 }),
  },
])('$kind', ({ file, className, make }) => {
  const runner: ProcessRunner = make();
  const sh = (script: string, cwd = dir) => {
    const io = { stdout: new TextSink(), stderr: new TextSink() };
    const proc = runner.start({ command: '/bin/sh', args: ['-c', script], cwd, env }, io);
    return { proc, ...io };
  };

  it('reports the exit code and passes stdout and stderr on', async () => {
    const { proc, stdout, stderr } = sh('echo out; echo err >&2; exit 5');
    expect(await proc.exited).toEqual({ exitCode: 5, signal: null });
    expect([stdout.text, stderr.text]).toEqual(['out\n', 'err\n']);
  });

  it('starts the process as the leader of its own process group', async () => {
    const { proc, stdout } = sh('ps -o pgid= -p $$');
    await proc.exited;
    expect(Number(stdout.text.trim())).toBe(await proc.started);
  });

  it('signals the whole process group, background children included', async () => {
    const { proc, stdout } = sh('sleep 1000 & echo "bg $!"; wait');
    await stdout.until('\n');
    const bg = Number(/bg (\d+)/.exec(stdout.text)?.[1]);
    proc.kill('SIGTERM');
    expect(await proc.exited).toEqual({ exitCode: null, signal: 'SIGTERM' });
    // the group's signal is delivered to both at once, but the shell can be seen gone before
    // the kernel has run the background child's exit (a clean-clone CI run saw it alive)
    await expect.poll(() => isAlive(bg), { timeout: 10_000 }).toBe(false);
  });

  it('ignores a kill after the process group is gone', async () => {
    const { proc } = sh('true');
    await proc.exited;
    expect(() => proc.kill('SIGTERM')).not.toThrow();
  });

  it('resolves a failed spawn with exit code 127 and a message instead of rejecting', async () => {
    const io = { stdout: new TextSink(), stderr: new TextSink() };
    const proc = runner.start({ command: '/no/such/program', args: [], cwd: dir, env }, io);
    expect(await proc.started).toBeUndefined();
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

  it('passes 16 MiB through a slow target intact, pausing the pipe instead of buffering it all', async () => {
    // A target that takes its time: the runner must wait for 'drain' rather than pile up chunks.
    let received = 0;
    let highest = 0;
    let inFlight = 0;
    const slow = new Writable({
      highWaterMark: 16 * 1024,
      write(chunk: Buffer, _enc, done) {
        inFlight += chunk.length;
        highest = Math.max(highest, slow.writableLength);
        setTimeout(() => {
          received += chunk.length;
          inFlight -= chunk.length;
          done();
        }, 1);
      },
    });
    const proc = runner.start(
      { command: '/bin/sh', args: ['-c', 'head -c 16777216 /dev/zero'], cwd: dir, env },
      { stdout: slow, stderr: new TextSink() },
    );
    expect(await proc.exited).toEqual({ exitCode: 0, signal: null });
    // Every write still in flight completes before 'finish' (the runner never ends the caller's
    // stream). Waiting for 'drain' instead could hang: it comes only after a write returned false.
    await new Promise<void>((r) => slow.end(r));
    expect(inFlight).toBe(0);
    expect(received + inFlight).toBe(16 * 1024 * 1024);
    // Paused at the high-water mark; what was read before the pause arrived (pipe reads of 64 KiB,
    // and for the spawner what was on its way over IPC: about 2 MiB under load) is all that
    // piles up, never the whole output (about 13 MiB without the pause).
    expect(highest).toBeLessThan(4 * 1024 * 1024);
  });

  it('delivers a signal sent before the process was running', async () => {
    const io = { stdout: new TextSink(), stderr: new TextSink() };
    const proc = runner.start({ command: '/bin/sleep', args: ['1000'], cwd: dir, env }, io);
    proc.kill('SIGTERM'); // synchronously: the thread has not even received the request yet
    expect(await proc.exited).toEqual({ exitCode: null, signal: 'SIGTERM' });
  });

  it('runs many processes at once, each with its own output and exit code', async () => {
    const runs = Array.from({ length: 40 }, (_, i) => sh(`echo line-${i}; exit ${i % 7}`));
    const exits = await Promise.all(runs.map((r) => r.proc.exited));
    expect(exits.map((e) => e.exitCode)).toEqual(runs.map((_, i) => i % 7));
    expect(runs.map((r) => r.stdout.text)).toEqual(runs.map((_, i) => `line-${i}\n`));
  });

  it('keeps its process alive while a child runs, and lets it exit when none does', async () => {
    // Nothing but the runner holds this process open: it must wait for the child, then exit.
    const script = join(dir, 'alone.mts');
    const runnerSrc = fileURLToPath(new URL(`./${file}`, import.meta.url));
    await writeFile(
      script,
      `import { PassThrough } from 'node:stream';
import { ${className} as Runner } from ${JSON.stringify(runnerSrc)};
const out = new PassThrough();
out.on('data', (d) => process.stdout.write(d));
const proc = new Runner().start(
  { command: '/bin/sh', args: ['-c', 'sleep 0.3; echo done'], cwd: '/', env: { PATH: '/usr/bin:/bin' } },
  { stdout: out, stderr: out },
);
void proc.exited.then((e) => process.stdout.write('exit ' + e.exitCode + '\\n'));
`,
    );
    const child = spawn(
      process.execPath,
      ['--conditions=@trellis/source', '--import', 'tsx', script],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let text = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (text += d));
    const code = await new Promise((r) => child.once('exit', r));
    expect({ code, text }).toEqual({ code: 0, text: 'done\nexit 0\n' });
  });
});

describe('spawner process runner', () => {
  it('reports its processes as exited when the spawner dies, and starts a new spawner', async () => {
    const runner = new SpawnerProcessRunner();
    const io = { stdout: new TextSink(), stderr: new TextSink() };
    const proc = runner.start({ command: '/bin/sleep', args: ['1000'], cwd: dir, env }, io);
    const pid = (await proc.started) as number;
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const spawner = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    expect(spawner).not.toBe(process.pid);
    expect(readFileSync(`/proc/${spawner}/cmdline`, 'utf8')).toMatch(/^trellis-spawner/); // in ps
    process.kill(spawner, 'SIGKILL');
    expect(await proc.exited).toEqual({ exitCode: null, signal: null });
    expect(io.stderr.text).toMatch(
      /^trellis: lost track of \/bin\/sleep: the spawner process exited \(SIGKILL\)\n$/,
    );
    process.kill(-pid, 'SIGKILL'); // it leads its own group: it outlived the spawner
    const again = runner.start(
      { command: '/bin/sh', args: ['-c', 'echo back'], cwd: dir, env },
      io,
    );
    expect(await again.exited).toEqual({ exitCode: 0, signal: null });
    expect(io.stdout.text).toBe('back\n');
  });

  it('starts no spawner before the first process: an idle server or worker holds one process', () => {
    expect(new SpawnerProcessRunner().spawnerPid).toBeUndefined();
  });

  it('ends the spawner after idleExitMs with no child, and makes a new one for the next start', async () => {
    const runner = new SpawnerProcessRunner({ idleExitMs: 100 });
    const io = { stdout: new TextSink(), stderr: new TextSink() };
    const busy = runner.start(
      { command: '/bin/sh', args: ['-c', 'sleep 0.3; echo one'], cwd: dir, env },
      io,
    );
    const first = runner.spawnerPid as number;
    expect(isAlive(first)).toBe(true);
    expect(await busy.exited).toEqual({ exitCode: 0, signal: null });
    await expect.poll(() => isAlive(first), { timeout: 10_000 }).toBe(false);
    expect(runner.spawnerPid).toBeUndefined();
    const again = runner.start({ command: '/bin/sh', args: ['-c', 'echo two'], cwd: dir, env }, io);
    expect(await again.exited).toEqual({ exitCode: 0, signal: null });
    expect(runner.spawnerPid).not.toBe(first);
    expect(io.stdout.text).toBe('one\ntwo\n');
    expect(io.stderr.text).toBe(''); // a planned exit is no lost process
  });
});
