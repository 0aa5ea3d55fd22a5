import type { WorkerState } from '../registry/worker-registry.js';
import type { CoordinatorContext } from '../server/coordinator-context.js';
import type { FleetPort, RemoteWorker } from './fleet-port.js';

/** What applying the requests needs of the shared view and the coordinator around it. */
export interface RequestTarget {
  /** The other coordinator, still publishing, that heard `id` after `sinceMs`, if any. */
  heardAfter(id: string, sinceMs: number): RemoteWorker | undefined;
  /** Applies an operator's state to a worker connected here (as `POST .../cordon` does). */
  setState(id: string, state: WorkerState): void;
}

/**
 * Applies the cordons, drains and uncordons other coordinators handed on through the shared
 * view (docs/ha.md, "Workers across coordinators") to the workers this coordinator hears
 * freshest, and removes them; a lapsed request is removed unapplied. A request for a worker
 * heard fresher elsewhere is left for that coordinator (the worker moved meanwhile).
 */
export const applyStateRequests = async (
  ctx: CoordinatorContext,
  port: FleetPort,
  target: RequestTarget,
): Promise<void> => {
  const now = ctx.deps.clock.now().getTime();
  for (const req of await port.requests()) {
    if (req.untilMs <= now) {
      await port.settle(req);
      continue;
    }
    const w = ctx.registry.get(req.workerId);
    if (w === undefined || w.assumed === true) continue;
    if (target.heardAfter(req.workerId, w.lastHeartbeat.getTime()) !== undefined) continue;
    target.setState(req.workerId, req.state);
    await port.settle(req);
  }
};
