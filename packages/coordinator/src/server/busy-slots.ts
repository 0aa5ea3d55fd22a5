import type { CoordinatorContext } from './coordinator-context.js';

/** Slots a worker has in use here: runs it claimed, or reports, whichever is more. */
export const busySlots = (ctx: CoordinatorContext, workerId: string): number => {
  const reported =
    ctx.registry.get(workerId)?.runningTasks.filter((t) => t.parentDagRunId === '').length ?? 0;
  return Math.max(reported, ctx.runs.slotsOf(workerId));
};
