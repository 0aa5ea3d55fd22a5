import { AppError, ErrorCode, RunStatus } from '@trellis/core';
import type { Dag, RunRef } from '@trellis/spec';
import type { LatestRun, ScheduleActions, ScheduledDag } from '../cron-scheduler.js';
import { scheduledRunId } from './scheduled-run-id.js';

/** What cron fires need of the runs (the services' RunService and the store's index). */
export interface ScheduledRunsPort {
  /** Starts a run through admission (it may queue). */
  startLoaded(
    dag: Dag,
    localDags: readonly Dag[],
    req: { trigger: 'schedule'; dagRunId: string },
  ): Promise<{ readonly record: { readonly dagRunId: string }; readonly queued: boolean }>;
  /** Asks every running run of the DAG to stop; the problems met. */
  stopAll(dagName: string): Promise<string[]>;
  restart(ref: RunRef): Promise<unknown>;
  /** Run summaries newest first (the store's index). */
  listRuns(filter: {
    name: string;
    status?: RunStatus;
    limit: number;
  }): Promise<readonly (LatestRun & { readonly dagRunId: string })[]>;
}

/** The cron loop's actions over the runs: what a start, stop or restart fire does. */
export const scheduleActions = (
  runs: ScheduledRunsPort,
  log: (line: string) => void,
): ScheduleActions => {
  const first = async (name: string, status?: RunStatus) =>
    (await runs.listRuns({ name, ...(status !== undefined ? { status } : {}), limit: 1 }))[0];
  return {
    start: async (d: ScheduledDag, fireAt: Date) => {
      // A DAG whose previous scheduled run still waits gets no second one on top.
      const waiting = await first(d.dag.name, RunStatus.Queued);
      if (waiting) {
        log(
          `scheduler: DAG "${d.dag.name}" still has run ${waiting.dagRunId} queued; this fire adds none`,
        );
        return;
      }
      const dagRunId = scheduledRunId(d.dag.name, fireAt);
      const started = await runs
        .startLoaded(d.dag, d.localDags ?? [], { trigger: 'schedule', dagRunId })
        .catch((e: unknown) => {
          if (!(e instanceof AppError) || e.code !== ErrorCode.AlreadyExists) throw e;
          return undefined;
        });
      if (started === undefined) {
        log(
          `scheduler: run ${dagRunId} of DAG "${d.dag.name}" exists already; this fire adds none`,
        );
        return;
      }
      log(
        `scheduler: run ${started.record.dagRunId} of DAG "${d.dag.name}" ${started.queued ? 'queued' : 'started'}`,
      );
    },
    stop: async (d) => {
      for (const e of await runs.stopAll(d.dag.name)) log(`scheduler: ${e}`);
    },
    restart: async (d) => {
      const running = await first(d.dag.name, RunStatus.Running);
      if (running) await runs.restart({ name: d.dag.name, dagRunId: running.dagRunId });
    },
    latestRun: (name) => first(name),
    isRunning: async (name) => (await first(name, RunStatus.Running)) !== undefined,
  };
};
