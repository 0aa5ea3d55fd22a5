import { appendFileSync, createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import type { RunRecorder, StepLogs } from '@trellis/engine';
import type { DagRunRecord } from '@trellis/spec';

/** A RunRecorder writing real log files into `dir` (run.log, <step>.out/.err), records in memory. */
export class FileRecorder implements RunRecorder {
  readonly runLogPath: string;
  readonly saves: DagRunRecord[] = [];
  readonly lines: string[] = [];

  /** Called with each chunk a step writes to its stdout (tests await output instead of sleeping). */
  onOutput: ((key: string, text: string) => void) | undefined;

  constructor(private readonly dir: string) {
    mkdirSync(dir, { recursive: true });
    this.runLogPath = join(dir, 'run.log');
  }

  save(record: DagRunRecord): Promise<void> {
    this.saves.push(structuredClone(record));
    return Promise.resolve();
  }

  log(line: string): void {
    this.lines.push(line);
    appendFileSync(this.runLogPath, `${line}\n`);
  }

  openStepLogs(key: string): Promise<StepLogs> {
    const stdoutPath = join(this.dir, `${key}.out`);
    const stderrPath = join(this.dir, `${key}.err`);
    const stdout = createWriteStream(stdoutPath, { flags: 'a' });
    const stderr = createWriteStream(stderrPath, { flags: 'a' });
    const write = stdout.write.bind(stdout);
    stdout.write = ((chunk: Buffer | string, ...rest: never[]) => {
      this.onOutput?.(key, chunk.toString());
      return write(chunk, ...rest);
    }) as typeof stdout.write;
    return Promise.resolve({
      stdoutPath,
      stderrPath,
      stdout,
      stderr,
      close: async () => {
        stdout.end();
        stderr.end();
        await Promise.all([finished(stdout), finished(stderr)]);
      },
    });
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
