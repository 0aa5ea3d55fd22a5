/** Run keys by worker id. */
export class RunKeysByWorker {
  protected readonly byWorker = new Map<string, Set<string>>();

  add(workerId: string, runKey: string): void {
    let set = this.byWorker.get(workerId);
    if (!set) this.byWorker.set(workerId, (set = new Set()));
    set.add(runKey);
  }

  has(workerId: string, runKey: string): boolean {
    return this.byWorker.get(workerId)?.has(runKey) ?? false;
  }

  /** The worker was forgotten: nothing is kept for it. */
  forgetWorker(workerId: string): void {
    this.byWorker.delete(workerId);
  }
}

/** Runs taken from a worker (it was lost): worker id -> keys of the runs it must drop. */
export class DroppedRuns extends RunKeysByWorker {}
