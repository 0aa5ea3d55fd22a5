import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SpawnerProcessRunner } from './spawner-process-runner.js';

/** Spawners as Node hands them out when file descriptors ran out: no IPC channel, no `send`. */
const spawned = vi.hoisted(
  () => [] as { killed: number; disconnected: number; args: readonly string[] }[],
);
vi.mock('node:child_process', () => ({
  spawn: (_command: string, args: readonly string[]) => {
    const helper = Object.assign(new EventEmitter(), {
      args,
      connected: false,
      pid: undefined,
      channel: undefined,
      killed: 0,
      disconnected: 0,
      disconnect: () => void helper.disconnected++,
      ref: () => undefined,
      unref: () => undefined,
      kill: () => {
        helper.killed++;
        return false;
      },
    });
    spawned.push(helper);
    return helper;
  },
}));

describe('SpawnerProcessRunner without a channel to its spawner (EMFILE, ENFILE)', () => {
  it('fails the start with exit code 127 and a message, and tries a new spawner next time', async () => {
    const runner = new SpawnerProcessRunner();
    const spec = { command: 'echo', args: ['hi'], cwd: '/', env: {} };
    for (let i = 1; i <= 2; i++) {
      const stderr = new PassThrough();
      const p = runner.start(spec, { stdout: new PassThrough(), stderr });
      expect(await p.exited).toEqual({ exitCode: 127, signal: null });
      expect(await p.started).toBeUndefined();
      expect(String(stderr.read())).toBe(
        'trellis: cannot start echo: no channel to the spawner process (out of file descriptors? EMFILE, ENFILE)\n',
      );
      expect(spawned).toHaveLength(i);
      expect(spawned[i - 1]?.killed).toBe(1);
    }
    expect(runner.spawnerPid).toBeUndefined();
  });

  it('starts the spawner with a small young generation and in lite mode (no optimizing compilers)', () => {
    const runner = new SpawnerProcessRunner();
    const spec = { command: 'true', args: [], cwd: '/', env: {} };
    runner.start(spec, { stdout: new PassThrough(), stderr: new PassThrough() });
    const flags = spawned.at(-1)?.args.slice(0, -2);
    expect(flags).toEqual(['--max-semi-space-size=1', '--lite-mode', '--no-expose-wasm']);
  });
});

describe('SpawnerProcessRunner.prepare', () => {
  afterEach(() => vi.useRealTimers());

  it('ends a prepared spawner that no start used after idleExitMs', () => {
    vi.useFakeTimers();
    const runner = new SpawnerProcessRunner({ idleExitMs: 1000 });
    runner.prepare();
    const helper = spawned.at(-1);
    vi.advanceTimersByTime(999);
    expect(helper?.disconnected).toBe(0);
    vi.advanceTimersByTime(1);
    expect(helper?.disconnected).toBe(1);
    runner.prepare(); // the next one is a new spawner
    expect(spawned.at(-1)).not.toBe(helper);
  });
});
