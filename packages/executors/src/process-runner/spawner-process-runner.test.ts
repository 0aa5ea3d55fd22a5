import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { SpawnerProcessRunner } from './spawner-process-runner.js';

/** Spawners as Node hands them out when file descriptors ran out: no IPC channel, no `send`. */
const spawned = vi.hoisted(() => [] as { killed: number }[]);
vi.mock('node:child_process', () => ({
  spawn: () => {
    const helper = Object.assign(new EventEmitter(), {
      connected: false,
      pid: undefined,
      channel: undefined,
      killed: 0,
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
});
