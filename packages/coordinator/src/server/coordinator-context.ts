import type { WorkerRegistry } from '../registry/worker-registry.js';
import { CapacitySignal } from './capacity-signal.js';
import type { CoordinatorDeps, LogChunkSink } from './coordinator-deps.js';
import { DroppedRuns } from './dropped-runs.js';
import { dirname } from 'node:path';
import { LogChunkWriter } from '@trellis/store';
import { RemoteRuns } from './remote-runs.js';
import { ReportedRuns } from './reported-runs.js';
import { WorkerCommands } from './worker-commands.js';

/** What the rooms of a coordinator share: its deps and its in-memory state. */
export interface CoordinatorContext {
  readonly deps: CoordinatorDeps;
  readonly warn: (message: string) => void;
  readonly registry: WorkerRegistry;
  /** Runs dispatched to workers, or executed on them. */
  readonly runs: RemoteRuns;
  readonly dropped: DroppedRuns;
  readonly reported: ReportedRuns;
  readonly commands: WorkerCommands;
  readonly capacity: CapacitySignal;
  readonly logs: LogChunkSink;
}

export const createContext = (
  deps: CoordinatorDeps,
  registry: WorkerRegistry,
): CoordinatorContext => {
  const warn = deps.warn ?? (() => undefined);
  const runs = new RemoteRuns();
  return {
    deps,
    warn,
    registry,
    runs,
    dropped: new DroppedRuns(),
    reported: new ReportedRuns(),
    commands: new WorkerCommands(runs, warn),
    capacity: new CapacitySignal(warn),
    logs:
      deps.logChunks ??
      new LogChunkWriter(deps.logDir, warn, {
        ...(deps.writeErrors ? { writeErrors: deps.writeErrors } : {}),
        runLogDirOf: async (run, root) => {
          const r = await deps.store.getRun(run, { root }).catch(() => undefined);
          return r === undefined || r.log === '' ? undefined : dirname(r.log);
        },
      }),
  };
};

/** Forgets a worker: its registry entry and the runs kept for it (dropped, reported). */
export const forgetWorker = (ctx: CoordinatorContext, workerId: string): void => {
  ctx.registry.forget(workerId);
  ctx.dropped.forgetWorker(workerId);
  ctx.reported.forgetWorker(workerId);
};
