import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAlive, TextSink } from '../../test/support/text-sink.js';
import { SPAWNER_FLAGS, SpawnerProcessRunner } from './spawner-process-runner.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'trellis-spawner-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Field 5 of /proc/<pid>/stat: the process group. */
const pgrp = (pid: number): number => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
};

/**
 * A parent process (its own group, as a CLI in a terminal) with a SpawnerProcessRunner: it
 * prints `spawner <pid>`, starts `script` and prints `step <pid> ready` once the step wrote
 * `started`; on SIGINT it sends the step SIGTERM
 * and prints the step's exit and output.
 */
const parent = async (script: string) => {
  const file = join(dir, 'parent.mts');
  const runnerSrc = fileURLToPath(new URL('./spawner-process-runner.ts', import.meta.url));
  await writeFile(
    file,
    `import { PassThrough } from 'node:stream';
import { SpawnerProcessRunner } from ${JSON.stringify(runnerSrc)};
const runner = new SpawnerProcessRunner();
let text = '';
const out = new PassThrough().on('data', (d) => {
  text += d;
  if (text === 'started\\n') void proc.started.then((pid) => process.stdout.write('step ' + pid + ' ready\\n'));
});
const env = { PATH: '/usr/bin:/bin' };
const proc = runner.start({ command: '/bin/sh', args: ['-c', ${JSON.stringify(script)}], cwd: '/', env }, { stdout: out, stderr: out });
process.stdout.write('spawner ' + runner.spawnerPid + '\\n');
process.on('SIGINT', () => {
  proc.kill('SIGTERM');
  void proc.exited.then((e) => process.stdout.write(JSON.stringify({ e, text }) + '\\n'));
});
`,
  );
  const child = spawn(process.execPath, ['--conditions=@trellis/source', '--import', 'tsx', file], {
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true,
  });
  const stdout = new TextSink();
  child.stdout.pipe(stdout);
  await stdout.until('spawner ');
  await stdout.until('\n');
  const spawner = Number(/spawner (\d+)/.exec(stdout.text)?.[1]);
  return { child, stdout, spawner };
};

describe('spawner process', () => {
  it('runs in its own process group, not in the group of the process that started it', () => {
    const runner = new SpawnerProcessRunner();
    runner.prepare();
    const spawner = runner.spawnerPid as number;
    expect(pgrp(spawner)).toBe(spawner);
    expect(pgrp(spawner)).not.toBe(pgrp(process.pid));
    process.kill(spawner, 'SIGKILL');
  });

  it("outlives a Ctrl-C to its parent's group, so the parent's stop logic ends the steps", async () => {
    const script = 'trap "echo cleanup; exit 3" TERM; sleep 30 & echo started; wait';
    const { child, stdout } = await parent(script);
    await stdout.until('ready\n');
    process.kill(-(child.pid as number), 'SIGINT'); // what a terminal's Ctrl-C does
    await stdout.until('}\n');
    const line = stdout.text.split('\n').find((l) => l.startsWith('{')) as string;
    expect(JSON.parse(line)).toEqual({
      e: { exitCode: 3, signal: null },
      text: 'started\ncleanup\n',
    });
    child.kill('SIGKILL');
  });

  it('exits when its parent is killed (SIGKILL: no chance to end it)', async () => {
    const { child, spawner, stdout } = await parent('sleep 30 & echo started; wait');
    await stdout.until('ready\n');
    const step = Number(/step (\d+) ready/.exec(stdout.text)?.[1]);
    expect(isAlive(spawner)).toBe(true);
    child.kill('SIGKILL');
    await expect.poll(() => isAlive(spawner), { timeout: 10_000 }).toBe(false);
    process.kill(-step, 'SIGKILL'); // it leads its own group: it outlived both
  });

  it('its V8 flags make node print nothing on stderr (lite mode warns without --no-expose-wasm)', () => {
    const r = spawnSync(process.execPath, [...SPAWNER_FLAGS, '-e', ''], { encoding: 'utf8' });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
  });
});
