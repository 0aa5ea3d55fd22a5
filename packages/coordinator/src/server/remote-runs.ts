import type { RunRef } from '@trellis/spec';
import type { Labels } from '../registry/selector.js';

/** A run the coordinator dispatched, or one a worker executes. */
export interface RemoteRun {
  readonly ref: RunRef;
  readonly root: RunRef;
  /** The worker executing it; undefined while it waits on its dispatch queue. */
  workerId: string | undefined;
  /** The selector of its dispatch queue (for availability). */
  readonly selector: Labels;
  /** Highest status report seq applied. */
  seq: number;
  /**
   * The revision of its stored record as this coordinator last wrote or read it for its worker
   * (the claim, the last report applied); undefined while not known. A report is saved by a
   * compare-and-swap against it, without reading the record first.
   */
  revision?: number;
  /** Stops watching the run's stop requests. */
  unwatch: () => void;
  /** A stop was requested; forwarded to the worker until the run ends. */
  cancelRequested: boolean;
  /** When it was put on its dispatch queue (ms since the epoch), for dispatch latency. */
  dispatchedAtMs?: number;
  /** Its worker's last heartbeat did not list it (docs/decisions.md, "Distributed mode"). */
  unlisted: boolean;
  /** The incarnation of its worker that claimed or last listed it (undefined: not known yet). */
  incarnation?: string;
  /** A warning said its worker no longer lists it. */
  warnedUnlisted?: boolean;
  /** Its final record is being written before any worker took it: claims are refused. */
  finishing: boolean;
  /**
   * The claim being saved (or retried after another write landed first): other claims of the
   * run are refused meanwhile; only that claim undoes its hold.
   */
  claiming?: { readonly workerId: string } | undefined;
  /** Resolves when the claim being saved is decided (granted or refused). */
  claimSettled?: Promise<void> | undefined;
  /** When its stored record was last checked for a claim made elsewhere (ms since the epoch). */
  checkedAtMs?: number;
}

/** `root/run` (a run id is unique under its root). */
export const runKey = (ref: RunRef, root: RunRef): string =>
  `${root.name}/${root.dagRunId}/${ref.name}/${ref.dagRunId}`;

/** Runs the coordinator tracks, by {@link runKey}. */
export class RemoteRuns {
  readonly #runs = new Map<string, RemoteRun>();

  get(ref: RunRef, root: RunRef): RemoteRun | undefined {
    return this.#runs.get(runKey(ref, root));
  }

  add(run: RemoteRun): void {
    this.#runs.set(runKey(run.ref, run.root), run);
  }

  remove(ref: RunRef, root: RunRef): RemoteRun | undefined {
    const key = runKey(ref, root);
    const run = this.#runs.get(key);
    if (run) {
      this.#runs.delete(key);
      run.unwatch();
    }
    return run;
  }

  /** Runs not yet claimed by a worker. */
  pending(): RemoteRun[] {
    return [...this.#runs.values()].filter((r) => r.workerId === undefined);
  }

  /** Runs a worker executes (children included). */
  ofWorker(workerId: string): RemoteRun[] {
    return [...this.#runs.values()].filter((r) => r.workerId === workerId);
  }

  /**
   * Runs a worker took off a dispatch queue (each takes one of its slots): top-level runs and
   * child runs dispatched on their own; not children running inside their parent's slot.
   */
  slotsOf(workerId: string): number {
    let n = 0;
    for (const r of this.#runs.values())
      if (
        r.workerId === workerId &&
        (r.dispatchedAtMs !== undefined ||
          (r.ref.dagRunId === r.root.dagRunId && r.ref.name === r.root.name))
      )
        n++;
    return n;
  }

  /** True when some tracked run has a stop request (cheap check for every heartbeat). */
  anyCancelRequested(): boolean {
    for (const r of this.#runs.values()) if (r.cancelRequested) return true;
    return false;
  }

  all(): RemoteRun[] {
    return [...this.#runs.values()];
  }

  clear(): void {
    for (const r of this.#runs.values()) r.unwatch();
    this.#runs.clear();
  }
}
