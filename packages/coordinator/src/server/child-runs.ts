import type { Dag, RunRef } from '@trellis/spec';
import type {
  GetRunRequest,
  GetRunResponse,
  StartChildAck,
  StartChildRequest,
} from '../wire/messages.js';
import type { CoordinatorDeps } from './coordinator-deps.js';
import { badArg, failedPrecondition } from './grpc-errors.js';
import { refOf } from './wire-refs.js';

/**
 * Child runs workers ask for (`StartChildRun`, `GetRun`, the child part of `CancelRun`): handed
 * to the deps' `ChildRunsPort`, so they take the same path as any child run.
 */
export class ChildRuns {
  readonly #deps: CoordinatorDeps;

  constructor(deps: CoordinatorDeps) {
    this.#deps = deps;
  }

  /** Starts the child unless it exists; FAILED_PRECONDITION without a children port. */
  async start(req: StartChildRequest): Promise<StartChildAck> {
    const ref = refOf(req.run);
    const root = refOf(req.root);
    const parent = refOf(req.parent);
    if (!ref || !root || !parent || req.workerId === '')
      throw badArg('StartChildRun needs worker_id, run, root and parent');
    if (Object.keys(req.selector).length === 0)
      throw badArg('StartChildRun needs a selector: a child without one runs beside its parent');
    const children = this.#deps.children;
    if (!children)
      throw failedPrecondition(
        'this coordinator does not start child runs for workers (no run service in its process)',
      );
    let snapshot: { dag: unknown; localDags?: unknown };
    try {
      snapshot = JSON.parse(req.snapshotJson) as typeof snapshot;
    } catch {
      throw badArg(`StartChildRun of run ${ref.dagRunId} carries no valid snapshot JSON`);
    }
    const started = await children.start({
      workerId: req.workerId,
      ref,
      root,
      parent,
      dag: snapshot.dag as Dag,
      localDags: Array.isArray(snapshot.localDags) ? (snapshot.localDags as Dag[]) : [],
      params: req.params,
      selector: { ...req.selector },
      ...(req.traceparent !== '' ? { traceparent: req.traceparent } : {}),
    });
    return { started };
  }

  /** A run's record: from the children port, or else from the store. */
  async get(req: GetRunRequest): Promise<GetRunResponse> {
    const ref = refOf(req.run);
    if (!ref) throw badArg('GetRun needs run.name and run.dagRunId');
    const root = refOf(req.root) ?? ref;
    const record = this.#deps.children
      ? await this.#deps.children.status(ref, root)
      : await this.#deps.store.getRun(ref, { root }).catch(() => undefined);
    return record
      ? { found: true, recordJson: JSON.stringify(record) }
      : { found: false, recordJson: '' };
  }

  /**
   * Stops a child a worker asked for (its waiter here stops it, on its queue or its worker).
   * Resolves true when it was known; undefined without a children port.
   */
  cancel(ref: RunRef, root: RunRef): Promise<boolean> | undefined {
    return this.#deps.children?.cancel(ref, root);
  }
}
