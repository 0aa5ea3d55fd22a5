import type { Clock } from '@trellis/core';
import type { CronScheduler, Kind } from '../cron-scheduler.js';
import { retrying } from '../fire-claim.js';

/**
 * Schedule fires recorded across instances (the PostgreSQL store), each claim fenced by the
 * lease: one instance acts on a fire, and a leader that lost its lease acts on none.
 */
export interface FireLedger {
  /** True when this instance claimed the fire (and still holds the lease). */
  claim(dagName: string, kind: Kind, at: Date): Promise<boolean>;
  /**
   * Records, fenced by the lease, the point this leader's cron resumes from (under
   * {@link RESUME_MARK_KEY}): it answers for every fire after it. A successor that finds no later
   * fire resumes from there, so a leader that dies after a minute boundary but before its first
   * claim loses no minute, even on a ledger that held no fire yet. Throws when not recorded.
   */
  markResumed(at: Date): Promise<void>;
  /** The latest fire (or resume mark) any instance recorded, or undefined. */
  lastFire(): Promise<Date | undefined>;
  /** The latest fire of each DAG and kind at or after `since`, by {@link fireKey}. */
  lastFiresSince(since: Date): Promise<ReadonlyMap<string, Date>>;
}

/** A fire's key in the ledger: the DAG's name for a start, `stop:` or `restart:` before it. */
export const fireKey = (dagName: string, kind: Kind): string =>
  kind === 'start' ? dagName : `${kind}:${dagName}`;

/** The ledger key of leaders' resume marks (no DAG name has a colon: no fire's key is this). */
export const RESUME_MARK_KEY = 'leader:resumed';

/** How far back a new leader fires what its predecessor missed, at most. */
const CATCH_UP_MAX_MS = 10 * 60_000;

/**
 * A new leader's cron fires what is due after its predecessor's last fires (claims dedupe): each
 * DAG from its own last fire, so two DAGs due the same minute are both fired when the
 * predecessor claimed only the first before it died; a DAG with no fire since the catch-up floor
 * from just before the latest fire or resume mark of any (that minute is looked at again); on a
 * ledger holding neither, from the moment it took the lead. The point is recorded (a resume mark)
 * before any fire, for its own successor. When the ledger cannot be read, from the moment it took
 * the lead.
 */
export const resumeCron = async (
  cron: CronScheduler,
  fires: FireLedger,
  clock: Clock,
  log: (line: string) => void,
  signal: AbortSignal,
): Promise<void> => {
  const took = clock.now().getTime();
  const floor = took - CATCH_UP_MAX_MS;
  // read again while it fails: a new leader that resumed from nothing would miss the minutes
  // that came due while the lead changed hands
  const read = await retrying(
    async () => ({
      last: await fires.lastFire(),
      each: await fires.lastFiresSince(new Date(floor)),
    }),
    clock,
    signal,
    (m) => log(`scheduler: the last schedule fire cannot be read: ${m}`),
  );
  if (read === undefined) {
    // the same process may lead again later: its cron must not resume from its old lead's tick
    if (!signal.aborted) cron.resumeFrom(new Date(took));
    return;
  }
  const { last, each } = read.value;
  // cron fires one time per entry and tick: from the last fire itself, so the next one is due
  const from = new Date(last === undefined ? took : Math.max(last.getTime(), floor));
  // without it, a successor of a leader killed before its first claim would resume from nothing
  await retrying(
    () => fires.markResumed(from),
    clock,
    signal,
    (m) => log(`scheduler: the point cron resumes from cannot be recorded: ${m}`),
  );
  if (signal.aborted) return;
  // a DAG with no fire of its own since the floor looks at the last minute again: the
  // predecessor may have died between that minute's claims (the claim's key keeps it single)
  const again = last === undefined ? from : new Date(Math.max(last.getTime() - 1, floor));
  cron.resumeFrom(again, (dag, kind) => {
    const own = each.get(fireKey(dag, kind));
    return own === undefined ? undefined : new Date(Math.max(own.getTime(), floor));
  });
};
