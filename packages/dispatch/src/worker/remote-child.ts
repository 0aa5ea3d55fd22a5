import { RunStatus, isFinalRunStatus, type Clock } from '@trellis/core';
import {
  canonicalSelector,
  isUnavailable,
  type CoordinatorClient,
  type Labels,
} from '@trellis/coordinator/client';
import { childRunResult, type ChildRunRequest, type ChildRunResult } from '@trellis/engine';
import type { Dag, DagRunRecord } from '@trellis/spec';

/** How often a worker reads the record of a child it asked the coordinator for (at most). */
const CHILD_POLL_MS = 1_000;
/** How long a stopped parent waits for the end of such a child to be confirmed. */
const CHILD_CANCEL_WAIT_MS = 15_000;

export interface RemoteChildDeps {
  readonly client: CoordinatorClient;
  readonly clock: Clock;
  readonly log: (line: string) => void;
  /** The asking worker's id. */
  readonly workerId: string;
}

/** Where asking for one child stands. */
interface ChildAsk {
  started: boolean;
  cancelled: boolean;
  cancelSent: boolean;
  giveUpAt: number;
}

/**
 * A child for other workers: the coordinator starts it (idempotent by run id, so a request
 * retried after a lost reply or a coordinator restart starts nothing twice) and this worker
 * polls its stored record until it ends. A stop of the parent cancels it through the
 * coordinator. While the coordinator is away, the calls retry with back-off and the parent
 * keeps running.
 */
export const runChildElsewhere = async (
  deps: RemoteChildDeps,
  req: ChildRunRequest,
  dag: Dag,
  selector: Labels,
): Promise<ChildRunResult> => {
  deps.log(
    `child run ${req.dagRunId} of DAG "${dag.name}" needs labels ${canonicalSelector(selector)}: asking the coordinator to start it on a matching worker`,
  );
  const ask: ChildAsk = { started: false, cancelled: false, cancelSent: false, giveUpAt: Infinity };
  let wait = 50; // first polls come fast; then every second
  for (;;) {
    if (req.abort.aborted && !ask.cancelled) {
      ask.cancelled = true;
      // After a stop the parent waits a bounded time for the child's end to be confirmed.
      ask.giveUpAt = deps.clock.now().getTime() + CHILD_CANCEL_WAIT_MS;
    }
    if (ask.cancelled && deps.clock.now().getTime() > ask.giveUpAt) {
      const why = `child DAG run ${req.dagRunId} of "${dag.name}" was asked to stop; the coordinator did not confirm its end within ${CHILD_CANCEL_WAIT_MS / 1000} s`;
      // The stopped parent's step says only "stopped" (the engine drops a stopped child's
      // error): the worker's log is where an operator learns the child may still run.
      deps.log(`${why}; it may still run`);
      return result(req, dag, RunStatus.Cancelled, why);
    }
    try {
      const ended = await step(deps, req, dag, selector, ask);
      if (ended) return ended;
      wait = Math.min(wait * 2, CHILD_POLL_MS);
    } catch (e) {
      if (!isUnavailable(e))
        return result(
          req,
          dag,
          RunStatus.Failed,
          `child DAG ${JSON.stringify(dag.name)} needs a worker with labels ${canonicalSelector(selector)}, and the coordinator could not start it for worker "${deps.workerId}": ${(e as Error).message}`,
        );
      wait = Math.min(Math.max(wait * 2, 250), 2_000); // the coordinator is away: back off
    }
    await pause(deps.clock, wait, ask.cancelled ? undefined : req.abort);
  }
};

/** One round: start (once), cancel (once, after a stop), read the record; a result once it ended. */
const step = async (
  deps: RemoteChildDeps,
  req: ChildRunRequest,
  dag: Dag,
  selector: Labels,
  ask: ChildAsk,
): Promise<ChildRunResult | undefined> => {
  const run = { name: dag.name, dagRunId: req.dagRunId };
  const root = { name: req.root.name, dagRunId: req.root.dagRunId };
  if (!ask.started) {
    if (ask.cancelled) return result(req, dag, RunStatus.Cancelled); // never asked for: nothing runs
    await deps.client.startChild({
      workerId: deps.workerId,
      run,
      root,
      parent: { name: req.parent.name, dagRunId: req.parent.dagRunId },
      snapshotJson: JSON.stringify({ dag, localDags: req.localDags }),
      params: req.params,
      selector: { ...selector },
      traceparent: req.traceparent ?? '',
    });
    ask.started = true;
  }
  if (ask.cancelled && !ask.cancelSent) {
    await deps.client.cancel({ run, root });
    ask.cancelSent = true;
  }
  const got = await deps.client.getRun({ run, root });
  if (!got.found) {
    ask.started = false; // the coordinator lost the request (restarted before storing it)
    return undefined;
  }
  const record = JSON.parse(got.recordJson) as DagRunRecord;
  return isFinalRunStatus(record.status)
    ? childRunResult(dag.name, record, { remote: true })
    : undefined;
};

const result = (
  req: ChildRunRequest,
  dag: Dag,
  status: RunStatus,
  error?: string,
): ChildRunResult => ({
  name: dag.name,
  dagRunId: req.dagRunId,
  status,
  outputs: {},
  ...(error !== undefined ? { error } : {}),
});

/** Sleeps `ms`, or less when `wakeOn` aborts (a stop of the parent is acted on at once). */
const pause = async (clock: Clock, ms: number, wakeOn: AbortSignal | undefined): Promise<void> => {
  const woken = new AbortController();
  const onAbort = (): void => woken.abort();
  wakeOn?.addEventListener('abort', onAbort, { once: true });
  await clock.sleep(ms, woken.signal).catch(() => undefined);
  wakeOn?.removeEventListener('abort', onAbort);
};
