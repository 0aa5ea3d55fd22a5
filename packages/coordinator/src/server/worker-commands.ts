import type * as grpc from '@grpc/grpc-js';
import type { WatchRequest, WorkerCommand } from '../wire/messages.js';
import type { RemoteRuns } from './remote-runs.js';
import { toMsg } from './wire-refs.js';

/** A worker's `WatchCommands` stream. */
export type CommandStream = grpc.ServerWritableStream<WatchRequest, WorkerCommand>;

/**
 * The command streams workers open (`WatchCommands`): stops, drops and queues to consume are
 * pushed at once; a worker without a stream gets them with its next heartbeat reply.
 */
export class WorkerCommands {
  /** Open command streams per worker. */
  readonly #streams = new Map<string, CommandStream>();
  readonly #runs: RemoteRuns;
  readonly #warn: (message: string) => void;

  constructor(runs: RemoteRuns, warn: (message: string) => void) {
    this.#runs = runs;
    this.#warn = warn;
  }

  /** A worker's new command stream: replaces its older one and gets what is already due. */
  watch(call: CommandStream): void {
    const id = call.request.workerId;
    this.#streams.get(id)?.end();
    this.#streams.set(id, call);
    const forget = (): void => {
      if (this.#streams.get(id) === call) this.#streams.delete(id);
    };
    call.on('cancelled', forget);
    call.on('error', forget);
    call.on('close', forget);
    // Anything already due (a stop requested while the worker was away).
    for (const c of this.due(id)) call.write(c);
  }

  /** Sends `cmd` on the worker's stream, if it has one open. */
  push(workerId: string, cmd: WorkerCommand): void {
    const s = this.#streams.get(workerId);
    if (!s) return; // the next heartbeat reply carries it
    try {
      s.write(cmd);
    } catch (e) {
      this.#warn(`command stream of worker ${workerId}: ${(e as Error).message}`);
    }
  }

  /** Stops due for the runs a worker executes. */
  due(workerId: string): WorkerCommand[] {
    const out: WorkerCommand[] = [];
    if (!this.#runs.anyCancelRequested()) return out;
    for (const r of this.#runs.ofWorker(workerId))
      if (r.cancelRequested) out.push({ kind: 'KIND_CANCEL', run: toMsg(r.ref) });
    return out;
  }

  /** Ends every stream (workers open a new one to the next coordinator). */
  endAll(): void {
    for (const s of this.#streams.values()) s.end();
    this.#streams.clear();
  }
}
