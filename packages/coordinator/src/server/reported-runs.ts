import type { RunningTask } from '../registry/worker-registry.js';
import { RunKeysByWorker } from './dropped-runs.js';
import { taskKey } from './task-refs.js';

/**
 * Runs whose final report a worker delivered, by worker id, until a heartbeat of that worker no
 * longer lists them. A worker lists an ended run until the answer to its final report reaches it
 * (packages/dispatch/src/worker/active-runs.ts): a heartbeat it sent just before that answer
 * still lists the run, which is then neither busy nor a run to adopt or drop.
 */
export class ReportedRuns extends RunKeysByWorker {
  /** A heartbeat of the worker listed `tasks`: those still running (the others are forgotten). */
  heard(workerId: string, tasks: RunningTask[]): RunningTask[] {
    const set = this.byWorker.get(workerId);
    if (!set) return tasks;
    const listed = new Set(tasks.map(taskKey));
    for (const key of set) if (!listed.has(key)) set.delete(key);
    if (set.size === 0) this.byWorker.delete(workerId);
    return tasks.filter((t) => !set.has(taskKey(t)));
  }
}
