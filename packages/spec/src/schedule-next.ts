import { Cron } from 'croner';
import type { ScheduleEntry } from './model/dag.js';

/** Compiled patterns by `timezone + cron`, so sorting many DAGs by next run does not recompile. */
const compiled = new Map<string, Cron | null>();
/** Bound on {@link compiled}: one entry per distinct expression; 10,000 is far above any real set. */
const MAX_COMPILED = 10_000;

const cronOf = (entry: ScheduleEntry): Cron | null => {
  const key = `${entry.timezone ?? ''}\u0000${entry.cron}`;
  let cron = compiled.get(key);
  if (cron === undefined) {
    try {
      cron = new Cron(entry.cron, {
        paused: true,
        ...(entry.timezone !== undefined ? { timezone: entry.timezone } : {}),
      });
    } catch {
      // An entry that did not come from parseScheduleExpression: it never fires.
      cron = null;
    }
    if (compiled.size >= MAX_COMPILED) compiled.clear();
    compiled.set(key, cron);
  }
  return cron;
};

/**
 * The earliest time after `from` at which any of the `schedule` entries fires (spec: GET /dags
 * `nextRun` sort; as the peer does: the earliest next time over the start schedules).
 * Each entry is evaluated in its own `CRON_TZ=` zone, or the server's zone when it has none.
 * Returns undefined for an empty schedule or when no entry ever fires again.
 */
export const nextRunOf = (schedule: readonly ScheduleEntry[], from: Date): Date | undefined => {
  let best: Date | undefined;
  for (const entry of schedule) {
    const next = cronOf(entry)?.nextRun(from) ?? null;
    if (next !== null && (best === undefined || next.getTime() < best.getTime())) best = next;
  }
  return best;
};

/** The first time after `after` (exclusive) at which `entry` fires, in its zone; or undefined. */
export const nextFireOf = (entry: ScheduleEntry, after: Date): Date | undefined =>
  cronOf(entry)?.nextRun(after) ?? undefined;

/** The last time strictly before `before` at which `entry` fired, in its zone; or undefined. */
export const previousFireOf = (entry: ScheduleEntry, before: Date): Date | undefined =>
  cronOf(entry)?.previousRuns(1, before)[0] ?? undefined;
