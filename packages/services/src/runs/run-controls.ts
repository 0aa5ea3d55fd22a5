import {
  AppError,
  ErrorCode,
  RunStatus,
  isFinalRunStatus,
  notFound,
  type Clock,
  type IdGenerator,
} from '@trellis/core';
import type { Dag, RunRef } from '@trellis/spec';
import type { Admission, StartedRun } from '../admission/admission.js';
import { retryNodes } from './retry-plan.js';
import type { RunStorePort } from './run-store-port.js';

/**
 * Stopping, retrying and restarting existing runs, for `RunService`. What they need (a part of
 * `RunServiceDeps`, and its admission).
 */
export interface RerunDeps {
  readonly store: RunStorePort;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly admission: Admission;
}

/** Asks every running run of the DAG to stop; returns the problems (spec: stop-all `errors`). */
export const stopAllRuns = async (store: RunStorePort, dagName: string): Promise<string[]> => {
  const running = await store.listRuns({ name: dagName, status: RunStatus.Running });
  const errors: string[] = [];
  for (const r of running) {
    try {
      await store.requestStop({ name: dagName, dagRunId: r.dagRunId });
    } catch (e) {
      errors.push(`run ${r.dagRunId}: ${(e as Error).message}`);
    }
  }
  return errors;
};

/** Asks the process running `ref` to stop it (asynchronous: the run ends cancelled). */
export const stopRun = async (store: RunStorePort, ref: RunRef): Promise<void> => {
  const run = await store.getRun(ref);
  if (run.status !== RunStatus.Running) {
    throw new AppError(
      ErrorCode.NotRunning,
      `run ${ref.dagRunId} of DAG "${ref.name}" is not running`,
      { ...ref },
    );
  }
  await store.requestStop(ref);
};

/**
 * Retries a run as a new run (docs/decisions.md): the original's DAG snapshot and params;
 * succeeded steps keep their result; with `stepName` only that step runs again. `newRunId` gives
 * the new run's id (checked once the run may be retried).
 */
export const retryRun = async (
  deps: RerunDeps,
  ref: RunRef,
  stepName: string | undefined,
  newRunId: () => string,
): Promise<StartedRun> => {
  const previous = await deps.store.getRun(ref);
  if (!isFinalRunStatus(previous.status) && previous.status !== RunStatus.NotStarted) {
    throw new AppError(
      ErrorCode.AlreadyRunning,
      `run ${ref.dagRunId} of DAG "${ref.name}" is still running; stop it or wait before retrying`,
    );
  }
  // spec: retry needs that no other instance of the DAG runs
  const others = await deps.store.listRuns({
    name: ref.name,
    status: RunStatus.Running,
    limit: 1,
  });
  if (others[0]) {
    throw new AppError(
      ErrorCode.AlreadyRunning,
      `DAG "${ref.name}" is running (run ${others[0].dagRunId}); retry when it ended`,
    );
  }
  const snapshot = await deps.store.getSnapshot(ref);
  const dag = snapshot.dag as Dag;
  if (stepName !== undefined && !dag.steps.some((s) => s.name === stepName)) {
    throw notFound('step', `${stepName} in DAG "${dag.name}"`);
  }
  return deps.admission.admit({
    dag,
    localDags: snapshot.localDags as Dag[],
    dagRunId: newRunId(),
    params: previous.params.map((p) => ({ ...p })),
    nodes: retryNodes(previous.nodes, stepName),
    trigger: 'retry',
  });
};

/**
 * Restarts a running run: asks it to stop, waits until it ended (at most the DAG's
 * maxCleanUpTimeSec plus `waitLimitMs`), waits `restartWaitSec`, then starts a new run from the
 * same DAG snapshot and params.
 */
export const restartRun = async (
  deps: RerunDeps,
  ref: RunRef,
  waitLimitMs: number,
): Promise<StartedRun> => {
  const snapshot = await deps.store.getSnapshot(ref);
  const dag = snapshot.dag as Dag;
  await stopRun(deps.store, ref);
  const deadline = deps.clock.now().getTime() + dag.maxCleanUpTimeSec * 1000 + waitLimitMs;
  let current = await deps.store.getRun(ref);
  while (!isFinalRunStatus(current.status)) {
    if (deps.clock.now().getTime() > deadline) {
      throw new AppError(
        ErrorCode.Internal,
        `run ${ref.dagRunId} of DAG "${ref.name}" did not stop in time; not restarted`,
      );
    }
    await deps.clock.sleep(100);
    current = await deps.store.getRun(ref);
  }
  if (dag.restartWaitSec > 0) await deps.clock.sleep(dag.restartWaitSec * 1000);
  return deps.admission.admit({
    dag,
    localDags: snapshot.localDags as Dag[],
    dagRunId: deps.ids.newRunId(),
    params: current.params.map((p) => ({ ...p })),
    trigger: 'restart',
  });
};
