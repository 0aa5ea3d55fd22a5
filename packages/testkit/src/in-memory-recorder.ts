import { PassThrough } from 'node:stream';
import type { RunRecorder, StepLogs } from '@trellis/engine';
import type { DagRunRecord } from '@trellis/spec';

/** A RunRecorder that keeps everything in memory: saved records, run log lines, step output. */
export class InMemoryRecorder implements RunRecorder {
  readonly runLogPath = '/logs/run.log';
  readonly saves: DagRunRecord[] = [];
  readonly lines: string[] = [];
  /**
   * What happened, in order: `save:<status>`, `close` (the run log closed) and
   * `stepLogs:close:<key>` (a node's log files closed), for tests of the order of events.
   */
  readonly journal: string[] = [];
  private readonly out = new Map<string, string>();
  private readonly err = new Map<string, string>();
  /** Step logs whose close reports a write failure, by node key. */
  private readonly failures = new Map<string, string>();

  /**
   * @param opts.slow saves and closes resolve one event-loop turn later (as a file store's do),
   *   so a save can still be in flight when the run changes again
   */
  constructor(private readonly opts: { readonly slow?: boolean } = {}) {}

  save(record: DagRunRecord): Promise<void> {
    this.saves.push(structuredClone(record));
    this.journal.push(`save:${record.status}`);
    return this.#settle();
  }

  #settle(): Promise<void> {
    return this.opts.slow ? new Promise((r) => setImmediate(r)) : Promise.resolve();
  }

  log(line: string): void {
    this.lines.push(line);
  }

  /** The node's log files report `message` as a write failure when they are closed. */
  failStepLogs(key: string, message: string): void {
    this.failures.set(key, message);
  }

  openStepLogs(key: string): Promise<StepLogs> {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    stdout.on('data', (c: Buffer) => this.out.set(key, (this.out.get(key) ?? '') + c.toString()));
    stderr.on('data', (c: Buffer) => this.err.set(key, (this.err.get(key) ?? '') + c.toString()));
    return Promise.resolve({
      stdoutPath: `/logs/${key}.out`,
      stderrPath: `/logs/${key}.err`,
      stdout,
      stderr,
      close: () => {
        this.journal.push(`stepLogs:close:${key}`);
        const failure = this.failures.get(key);
        return failure === undefined ? Promise.resolve() : Promise.reject(new Error(failure));
      },
    });
  }

  close(): Promise<void> {
    this.journal.push('close');
    return this.#settle();
  }

  /** Everything written to the node's stdout so far. */
  stdoutOf(key: string): string {
    return this.out.get(key) ?? '';
  }

  stderrOf(key: string): string {
    return this.err.get(key) ?? '';
  }

  /** The last saved record. */
  get last(): DagRunRecord | undefined {
    return this.saves[this.saves.length - 1];
  }
}
