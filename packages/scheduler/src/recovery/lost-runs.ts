import { hostname } from 'node:os';
import { NodeStatus, RunStatus, type Clock } from '@trellis/core';
import type { DagRunRecord } from '@trellis/spec';

/** Liveness of processes (the store's process owner helpers implement it). */
export interface LostRunsProbe {
  /** Start time of a process, or undefined when it does not run. */
  processStartTime(pid: number): string | undefined;
}

/** What lost-run recovery needs. */
export interface LostRunsDeps {
  readonly store: {
    /** Runs marked running whose owner process is gone. */
    findOrphanedRuns(): Promise<DagRunRecord[]>;
    saveRun(record: DagRunRecord): Promise<void>;
  };
  readonly clock: Clock;
  readonly processes: LostRunsProbe;
  /** This host's name, as a run's owner records it. @default os.hostname() */
  readonly host?: string;
}

/**
 * Lost-run recovery: marks runs whose owner process died as failed, with an error saying so, and
 * kills the process groups their steps left behind. Every process that uses the store runs it at
 * start; the scheduler's queue processor runs it every 10 s, and tells admission of the runs
 * it ended (their slots are freed).
 */
export const recoverLostRuns = async (deps: LostRunsDeps): Promise<DagRunRecord[]> => {
  const orphans = await deps.store.findOrphanedRuns();
  const now = deps.clock.now().toISOString();
  for (const run of orphans) {
    const who = run.owner ? `pid ${run.owner.pid} on ${run.owner.host}` : 'an unknown process';
    // a step's pid names a process on its owner's host only: another host's pid here is a
    // stranger (the PostgreSQL store finds runs of instances lost on other hosts)
    const here = run.owner === undefined || run.owner.host === (deps.host ?? hostname());
    for (const n of [...run.nodes, run.onSuccess, run.onFailure, run.onCancel, run.onExit]) {
      if (!n || n.status !== NodeStatus.Running) continue;
      if (here && n.pid !== undefined) killLeftover(deps.processes, n.pid, n.startedAt);
      n.status = NodeStatus.Failed;
      n.error = `the process running this step (${who}) died`;
      n.finishedAt = now;
      delete n.pid;
    }
    run.status = RunStatus.Failed;
    run.error = `the process that ran this run (${who}) died before it finished; marked failed at ${now}`;
    run.finishedAt = now;
    run.revision++;
    await deps.store.saveRun(run);
  }
  return orphans;
};

/** SIGKILLs a step's process group, if that pid still names a process started for it. */
const killLeftover = (processes: LostRunsProbe, pgid: number, startedAt: string): void => {
  const started = processes.processStartTime(pgid);
  if (!started || Date.parse(started) < Date.parse(startedAt) - 5000) return; // gone, or a reused pid
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // already gone
  }
};
