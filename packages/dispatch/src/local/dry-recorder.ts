import { PassThrough } from 'node:stream';
import type { RunRecorder } from '@trellis/engine';

/**
 * In a dry run nothing is stored (no record, no log files): run log lines and step output go to
 * `onLog`, prefixed with the step name.
 */
export const dryRecorder = (onLog: (line: string) => void): RunRecorder => ({
  runLogPath: '',
  save: () => Promise.resolve(),
  log: onLog,
  openStepLogs: (key) => {
    const sink = (): PassThrough => {
      const s = new PassThrough();
      s.on('data', (c: Buffer) => {
        for (const line of c.toString().split('\n')) if (line !== '') onLog(`  [${key}] ${line}`);
      });
      return s;
    };
    return Promise.resolve({
      stdoutPath: '',
      stderrPath: '',
      stdout: sink(),
      stderr: sink(),
      close: () => Promise.resolve(),
    });
  },
  close: () => Promise.resolve(),
});
