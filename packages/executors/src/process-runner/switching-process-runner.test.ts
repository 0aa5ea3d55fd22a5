import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { ProcessRunner, ProcessSpec, RunningProcess } from '@trellis/core';
import { SwitchingProcessRunner } from './switching-process-runner.js';

/** A runner that notes the commands it was asked to start (and when it was prepared). */
const recording = (log: string[], name: string): ProcessRunner & { prepare(): void } => ({
  prepare: () => log.push(`${name}: prepare`),
  start: (spec: ProcessSpec): RunningProcess => {
    log.push(`${name}: ${spec.command}`);
    return {
      started: Promise.resolve(1),
      exited: Promise.resolve({ exitCode: 0, signal: null }),
      kill: () => undefined,
    };
  },
});

describe('SwitchingProcessRunner', () => {
  it('starts the first processes directly, prepares the spawner halfway, then uses it', () => {
    const log: string[] = [];
    const runner = new SwitchingProcessRunner({
      directStarts: 4,
      direct: recording(log, 'direct'),
      spawner: recording(log, 'spawner'),
    });
    const io = { stdout: new PassThrough(), stderr: new PassThrough() };
    for (let i = 1; i <= 6; i++)
      runner.start({ command: `c${i}`, args: [], cwd: '/', env: {} }, io);
    expect(log).toEqual([
      'direct: c1',
      'spawner: prepare',
      'direct: c2',
      'direct: c3',
      'direct: c4',
      'spawner: c5',
      'spawner: c6',
    ]);
  });
});
