import { NodeStatus, isFinalNodeStatus, isFinalRunStatus } from '@trellis/core';
import type { RunRef } from '@trellis/spec';
import { findNode, type LogFollowHandle, type RunReads } from '../runs/run-reads.js';
import type { RunEvents } from './run-events.js';

/** Where a followed step log goes. */
export interface StepLogSink {
  /** Lines `first`..`first + lines.length - 1` of the log (1-based). */
  lines(lines: readonly string[], first: number): void;
  /** The step (or its run) ended and every line was sent; nothing follows. */
  end(): void;
  /** Following failed (a read error): nothing follows. */
  fail(e: Error): void;
}

/** What {@link followStepLog} needs. */
export interface StepLogFollowDeps {
  readonly reads: RunReads;
  readonly events: RunEvents;
}

/**
 * Follows a step's stdout or stderr live from line `fromLine`: what is there, then new lines as
 * they are written, and `end` once the step or its run is final (after its last line). A step
 * not started yet is followed from its `step:started`. Returns the way to stop (client gone).
 * Throws not_found for an unknown run or step.
 */
export const followStepLog = async (
  deps: StepLogFollowDeps,
  ref: RunRef,
  stepName: string,
  stream: 'stdout' | 'stderr',
  fromLine: number,
  sink: StepLogSink,
): Promise<() => void> => {
  const run = await deps.reads.find(ref);
  findNode(run, stepName);
  const id = { name: run.name, dagRunId: run.dagRunId };
  let follow: LogFollowHandle | undefined;
  let ended = false;
  /** Failed or stopped by the client: no follow may start any more. */
  let stopped = false;
  let started: Promise<void> | undefined;
  const finish = async (): Promise<void> => {
    if (ended) return;
    ended = true;
    sub.unsubscribe();
    await started;
    await follow?.flush();
    sink.end();
  };
  const start = async (): Promise<void> => {
    const now = await deps.reads.find(id);
    const node = findNode(now, stepName);
    const path = stream === 'stderr' ? node.stderr : node.stdout;
    // also after `finish` began (the run ended meanwhile): it waits for this start, then flushes
    if (path !== '' && !follow && !stopped)
      follow = deps.reads.followLog(
        path,
        fromLine,
        (l, f) => sink.lines(l, f),
        (e) => fail(e),
      );
    const over =
      isFinalRunStatus(now.status) ||
      (node.status !== NodeStatus.NotStarted && isFinalNodeStatus(node.status));
    if (over) void finish();
  };
  const fail = (e: Error): void => {
    if (stopped) return;
    ended = true;
    stopped = true;
    sub.unsubscribe();
    follow?.close();
    sink.fail(e);
  };
  const sub = deps.events.subscribe({ dag: id.name, dagRunId: id.dagRunId }, (e) => {
    if (e.dagRunId !== id.dagRunId || ended) return;
    const mine = e.data.stepName === stepName;
    if (e.type === 'step:started' && mine) started = start().catch(fail);
    else if ((e.type === 'step:finished' && mine) || e.type === 'run:finished') void finish();
  });
  started = start().catch(fail);
  await started;
  return () => {
    ended = true;
    stopped = true;
    sub.unsubscribe();
    follow?.close();
  };
};
