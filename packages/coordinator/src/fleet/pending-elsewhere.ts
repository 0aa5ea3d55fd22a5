import { isFinalRunStatus } from '@trellis/core';
import { canonicalSelector, type Labels } from '../registry/selector.js';
import type { CoordinatorContext } from '../server/coordinator-context.js';
import { runKey, type RemoteRun } from '../server/remote-runs.js';

/** A run dispatched here and not claimed here for this long is looked up in the store. */
export const PENDING_CHECK_MS = 5_000;
/** At most this many store reads per pass. */
const CHECKS_PER_PASS = 50;

/**
 * Forgets runs this coordinator put on a dispatch queue that a worker connected to another
 * coordinator claimed (sharing one Redis, any coordinator's worker may take the job): those that
 * other coordinators' workers list, and those whose stored record names a worker or ended
 * (checked in the store once a run waited {@link PENDING_CHECK_MS}). Otherwise they would hold
 * a slot in this coordinator's availability for ever, and a stop would be taken for one before
 * start. A claim here sets the run's worker before any await, so a run still unclaimed here
 * whose record names a worker was claimed elsewhere.
 */
export const forgetClaimedElsewhere = async (
  ctx: CoordinatorContext,
  listedElsewhere: ReadonlySet<string>,
): Promise<void> => {
  const now = ctx.deps.clock.now().getTime();
  const unclaimed = (r: RemoteRun): boolean =>
    r.workerId === undefined && !r.finishing && ctx.runs.get(r.ref, r.root) === r;
  let forgot = false;
  let checks = 0;
  for (const run of ctx.runs.pending()) {
    if (listedElsewhere.has(runKey(run.ref, run.root))) {
      ctx.runs.remove(run.ref, run.root);
      forgot = true;
      continue;
    }
    const since = Math.max(run.dispatchedAtMs ?? 0, run.checkedAtMs ?? 0);
    if (now - since < PENDING_CHECK_MS || checks >= CHECKS_PER_PASS) continue;
    checks++;
    run.checkedAtMs = now;
    const stored = await ctx.deps.store.getRun(run.ref, { root: run.root }).catch(() => undefined);
    if (stored === undefined || !unclaimed(run)) continue;
    const owner = stored.owner?.workerId ?? '';
    if (isFinalRunStatus(stored.status) || (owner !== '' && owner !== 'local')) {
      ctx.runs.remove(run.ref, run.root);
      forgot = true;
    }
  }
  if (forgot) ctx.capacity.changed();
};

/** Pending runs counted by selector (canonical form). */
const countBySelector = (selectors: readonly Labels[]): Map<string, number> => {
  const counts = new Map<string, number>();
  for (const s of selectors) {
    const key = canonicalSelector(s);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
};

/** True when some selector has fewer pending runs in `after` than in `before`. */
export const fewerOfAny = (before: readonly Labels[], after: readonly Labels[]): boolean => {
  const now = countBySelector(after);
  for (const [key, n] of countBySelector(before)) if ((now.get(key) ?? 0) < n) return true;
  return false;
};
