import { Writable } from 'node:stream';
import { isFinalRunStatus, type Clock } from '@trellis/core';
import type { RunRecorder, StepLogs } from '@trellis/engine';
import type { DagRunRecord, RunRef } from '@trellis/spec';
import { stepLogPathsBeside } from '@trellis/store/log-locations';
import type { Outbox } from './outbox.js';

/** Identity and starting point of a run's recorder on a worker. */
export interface GrpcRecorderInit {
  readonly workerId: string;
  readonly ref: RunRef;
  readonly root: RunRef;
  /** The run log's path on the coordinator (the record's `log`). */
  readonly runLogPath: string;
  /** Bytes already in the run log on the coordinator. */
  readonly runLogSize: number;
  /** Sent with the first status report of a child run, so the coordinator can create it. */
  readonly snapshotJson?: string;
  readonly clock: Clock;
  readonly outbox: Outbox;
  /** The outbox key of the run. */
  readonly runKey: string;
}

/**
 * The engine's recorder on a worker (docs/architecture.md, "The path of a run"): every save becomes a status
 * report with the next per-run sequence number, every log byte a chunk at its file offset, all
 * through the worker's ordered outbox. Nothing here waits for the coordinator: the run goes on
 * while it is away.
 */
export class GrpcRecorder implements RunRecorder {
  readonly runLogPath: string;
  readonly #init: GrpcRecorderInit;
  readonly #offsets = new Map<string, number>();
  #seq = 0;
  #snapshotSent = false;

  constructor(init: GrpcRecorderInit) {
    this.#init = init;
    this.runLogPath = init.runLogPath;
    this.#offsets.set(init.runLogPath, init.runLogSize);
  }

  save(record: DagRunRecord): Promise<void> {
    const i = this.#init;
    this.#seq += 1;
    const withSnapshot = !this.#snapshotSent && i.snapshotJson !== undefined;
    this.#snapshotSent = true;
    i.outbox.status(
      i.runKey,
      {
        workerId: i.workerId,
        run: { name: i.ref.name, dagRunId: i.ref.dagRunId },
        root: { name: i.root.name, dagRunId: i.root.dagRunId },
        seq: this.#seq,
        recordJson: JSON.stringify(record),
        snapshotJson: withSnapshot ? (i.snapshotJson ?? '') : '',
      },
      isFinalRunStatus(record.status),
    );
    return Promise.resolve();
  }

  /** Same format as the local run log: each line prefixed by the clock's ISO time. */
  log(line: string): void {
    const at = this.#init.clock.now().toISOString();
    const text = line
      .split(/\r?\n/)
      .map((l) => `${at} ${l}\n`)
      .join('');
    void this.#write(this.runLogPath, Buffer.from(text));
  }

  openStepLogs(key: string): Promise<StepLogs> {
    const { stdoutPath, stderrPath } = stepLogPathsBeside(this.runLogPath, key);
    const sink = (path: string): Writable =>
      new Writable({
        // Back-pressure: at the outbox's size limit the write completes once there is room.
        write: (chunk: Buffer | string, _enc, cb) => {
          this.#write(path, Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk), true).then(
            () => cb(),
            cb,
          );
        },
      });
    const stdout = sink(stdoutPath);
    const stderr = sink(stderrPath);
    return Promise.resolve({
      stdoutPath,
      stderrPath,
      stdout,
      stderr,
      close: async () => {
        await Promise.all([endStream(stdout), endStream(stderr)]);
      },
    });
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  /** Queues bytes of a file; step output (`bounded`) waits while the outbox is full. */
  #write(path: string, data: Buffer, bounded = false): Promise<void> {
    if (data.length === 0) return Promise.resolve();
    const offset = this.#offsets.get(path) ?? 0;
    this.#offsets.set(path, offset + data.length);
    const i = this.#init;
    const chunk = {
      workerId: i.workerId,
      run: { name: i.ref.name, dagRunId: i.ref.dagRunId },
      root: { name: i.root.name, dagRunId: i.root.dagRunId },
      path,
      offset,
      data,
    };
    if (bounded) return i.outbox.output(i.runKey, chunk);
    i.outbox.log(i.runKey, chunk);
    return Promise.resolve();
  }
}

const endStream = (s: Writable): Promise<void> =>
  new Promise((resolve) => {
    if (s.writableFinished || s.destroyed) {
      resolve();
      return;
    }
    s.end(() => resolve());
  });
