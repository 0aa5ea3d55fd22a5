import { RunStatus, type Clock } from '@trellis/core';
import { nextFireOf, type Dag, type ScheduleEntry } from '@trellis/spec';
import { claimFire } from './fire-claim.js';

/** A DAG file the scheduler looks at (its main DAG, valid). */
export interface ScheduledDag {
  readonly fileName: string;
  readonly dag: Dag;
  /** The other DAGs of its file (child runs). */
  readonly localDags?: readonly Dag[];
  readonly suspended: boolean;
}

/** The latest run of a DAG, as far as schedule decisions need it. */
export interface LatestRun {
  readonly status: number;
  /** ISO 8601, or '' when it never started. */
  readonly startedAt: string;
}

/** What the scheduler does when a schedule fires (the composition root wires the run service). */
export interface ScheduleActions {
  /** Starts a run through admission (it may queue). */
  start(d: ScheduledDag, fireAt: Date): Promise<void>;
  /** Stops every running run of the DAG. */
  stop(d: ScheduledDag): Promise<void>;
  /** Restarts the DAG's running run (stop, `restartWaitSec`, start anew). */
  restart(d: ScheduledDag): Promise<void>;
  /** The DAG's latest run, if any. */
  latestRun(name: string): Promise<LatestRun | undefined>;
  /** True when a run of the DAG is running. */
  isRunning(name: string): Promise<boolean>;
}

export interface CronSchedulerDeps {
  readonly clock: Clock;
  /** Every valid DAG file with its suspension flag (read at every tick: files may change). */
  readonly dags: () => Promise<readonly ScheduledDag[]>;
  readonly actions: ScheduleActions;
  /** One line per decision worth an operator's eye (fires, skips, failures). */
  readonly log: (line: string) => void;
  /** Called after every completed tick (health: a stalled loop stops calling it). */
  readonly onTick?: (at: Date) => void;
  /**
   * Claims a fire across instances before it acts (the PostgreSQL store's fire ledger, fenced
   * by the leader lease): false when another instance fired it already; throws when it could
   * not be made (the store away, the lease token refused), and is then tried again until the
   * loop stops (fire-claim.ts). Absent: every fire acts (one store, one scheduler).
   */
  readonly claim?: (dagName: string, kind: Kind, at: Date) => Promise<boolean>;
}

export type Kind = 'start' | 'stop' | 'restart';

const MINUTE_MS = 60_000;

/** The calendar day of `at` in `timezone` (the server's zone when absent), as YYYY-MM-DD. */
const dayOf = (at: Date, timezone?: string): string =>
  new Intl.DateTimeFormat('en-CA', {
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    ...(timezone ? { timeZone: timezone } : {}),
  }).format(at);

/**
 * The cron loop (spec: `schedule`, with `start`/`stop`/`restart` lists and `CRON_TZ=`; peer
 * section 4.17). It wakes at every minute boundary, reads the DAG files anew (so added, changed
 * and removed files count without a restart), and fires each entry whose time came since the
 * previous tick: once, even when the timer was late or the process was busy for several
 * minutes. A fire time never fires twice, even when the clock goes backwards. Suspended DAGs
 * produce nothing. Fires of different DAGs run side by side; a slow one (a restart waiting for
 * its run to stop) never holds up the loop.
 */
export class CronScheduler {
  /** Last fire time handled per entry (file, kind, expression). */
  readonly #fired = new Map<string, number>();
  /** Fires still in progress, per DAG file (a DAG's fires keep their order). */
  readonly #busy = new Map<string, Promise<void>>();
  #prevTick: Date | undefined;
  /** Set by {@link resumeFrom}: the loop's first tick comes at once, not at the next minute. */
  #resumed = false;
  /** Set by {@link resumeFrom}: each DAG's own resume point, for the next tick only. */
  #resumeOf: ((dagName: string, kind: Kind) => Date | undefined) | undefined;
  /** The running loop's signal: a claim being retried gives up when it aborts. */
  #signal: AbortSignal | undefined;

  constructor(private readonly deps: CronSchedulerDeps) {}

  /** Runs until `signal` aborts, then waits for fires in progress. */
  async run(signal: AbortSignal): Promise<void> {
    this.#prevTick ??= this.deps.clock.now();
    this.#signal = signal;
    // a new leader fires at once what came due since its predecessor's last fire (a take-over
    // just after a minute boundary would otherwise fire that minute a whole minute late)
    if (this.#resumed && !signal.aborted) {
      this.#resumed = false;
      await this.tick();
    }
    while (!signal.aborted) {
      const now = this.deps.clock.now();
      const wait = MINUTE_MS - (now.getTime() % MINUTE_MS);
      await this.deps.clock.sleep(wait, signal).catch(() => undefined);
      if (signal.aborted) break;
      await this.tick();
    }
    await this.idle();
  }

  /**
   * Fires from `at` on at the next tick (a new leader takes over from the last fire its
   * predecessor recorded, so a hand-over misses no fire; the claims keep it from doubling one).
   */
  resumeFrom(at: Date, own?: (dagName: string, kind: Kind) => Date | undefined): void {
    this.#prevTick = at;
    this.#resumeOf = own;
    this.#fired.clear();
    this.#resumed = true;
  }

  /** Resolves when no fire is in progress. */
  async idle(): Promise<void> {
    while (this.#busy.size > 0) await Promise.all([...this.#busy.values()]);
  }

  /**
   * Fires every entry due since the previous tick; resolves when the fires started (a fire that
   * takes long, such as a restart, goes on in the background: see {@link idle}).
   */
  async tick(): Promise<void> {
    const now = this.deps.clock.now();
    const since = this.#prevTick ?? now;
    // The clock went backwards: nothing before `since` fires again (#fired guards each entry).
    const from = now.getTime() < since.getTime() ? now : since;
    let dags: readonly ScheduledDag[];
    try {
      dags = await this.deps.dags();
    } catch (e) {
      // Keep the window open: the next tick fires what is due now.
      this.deps.log(`scheduler: reading the DAG files failed: ${(e as Error).message}`);
      return;
    }
    const live = new Set<string>();
    const starting: Promise<void>[] = [];
    for (const d of dags) {
      if (d.suspended) continue;
      const fires: [Kind, ScheduleEntry, Date][] = [];
      for (const kind of ['stop', 'restart', 'start'] as const) {
        for (const entry of d.dag.schedule[kind]) {
          const key = `${d.fileName}\u0000${kind}\u0000${entry.timezone ?? ''}\u0000${entry.cron}`;
          live.add(key);
          const at = nextFireOf(entry, this.#resumeOf?.(d.dag.name, kind) ?? from);
          if (at === undefined || at.getTime() > now.getTime()) continue;
          if ((this.#fired.get(key) ?? -Infinity) >= at.getTime()) continue;
          this.#fired.set(key, at.getTime());
          fires.push([kind, entry, at]);
        }
      }
      if (fires.length > 0) starting.push(this.#enqueueFires(d, fires));
    }
    for (const key of this.#fired.keys()) if (!live.has(key)) this.#fired.delete(key);
    this.#resumeOf = undefined;
    this.#prevTick = now.getTime() > since.getTime() ? now : since;
    await Promise.all(starting);
    this.deps.onTick?.(now);
  }

  /**
   * Chains a DAG's fires after its fires in progress; resolves once they started (a start is
   * awaited, a restart is not: it waits for the old run to stop).
   */
  #enqueueFires(d: ScheduledDag, fires: [Kind, ScheduleEntry, Date][]): Promise<void> {
    let started: () => void = () => undefined;
    const startedP = new Promise<void>((r) => (started = r));
    const busy = this.#busy.get(d.fileName);
    const prev = busy ?? Promise.resolve();
    if (busy) started(); // behind fires still in progress: the tick does not wait for them
    const chain = prev.then(async () => {
      for (const [kind, entry, at] of fires) {
        if (kind === 'restart') {
          started();
        }
        await this.#fire(kind, d, entry, at);
      }
      started();
    });
    this.#busy.set(d.fileName, chain);
    void chain.then(() => {
      if (this.#busy.get(d.fileName) === chain) this.#busy.delete(d.fileName);
    });
    return startedP;
  }

  async #fire(kind: Kind, d: ScheduledDag, entry: ScheduleEntry, at: Date): Promise<void> {
    const what = `${kind} schedule "${entry.timezone ? `CRON_TZ=${entry.timezone} ` : ''}${entry.cron}" of DAG "${d.dag.name}" at ${at.toISOString()}`;
    try {
      const claim = this.deps.claim;
      if (claim) {
        const warn = (m: string): void => this.deps.log(`scheduler: ${what}: ${m}`);
        const mine = () => claim(d.dag.name, kind, at);
        const claimed = await claimFire(mine, this.deps.clock, this.#signal, warn);
        if (claimed === undefined) return;
        if (!claimed) {
          // a start is made sure of (its run id is the fire's: it is created at most once), as
          // the claimer may have died before creating it; a stop or restart is left to it
          this.deps.log(`scheduler: ${what}: fired by another instance`);
          if (kind !== 'start') return;
        }
      }
      if (kind === 'start') {
        const skip = await this.#skipStart(d, entry, at);
        if (skip !== undefined) {
          this.deps.log(`scheduler: ${what}: skipped (${skip})`);
          return;
        }
        await this.deps.actions.start(d, at);
      } else {
        if (!(await this.deps.actions.isRunning(d.dag.name))) {
          this.deps.log(`scheduler: ${what}: nothing to do (no run is running)`);
          return;
        }
        await (kind === 'stop' ? this.deps.actions.stop(d) : this.deps.actions.restart(d));
        this.deps.log(`scheduler: ${what}: done`);
      }
    } catch (e) {
      this.deps.log(`scheduler: ${what}: failed: ${(e as Error).message}`);
    }
  }

  /**
   * Why a start fire is skipped, or undefined (spec: `skipIfSuccessful`, "skip if already
   * succeeded today"): the DAG's latest run succeeded and started earlier on the fire's calendar
   * day, in the entry's zone.
   */
  async #skipStart(d: ScheduledDag, entry: ScheduleEntry, at: Date): Promise<string | undefined> {
    if (!d.dag.skipIfSuccessful) return undefined;
    const latest = await this.deps.actions.latestRun(d.dag.name);
    if (latest?.status !== RunStatus.Succeeded || latest.startedAt === '') return undefined;
    const started = new Date(latest.startedAt);
    if (
      started.getTime() < at.getTime() &&
      dayOf(started, entry.timezone) === dayOf(at, entry.timezone)
    )
      return `skipIfSuccessful: run started ${latest.startedAt} already succeeded today`;
    return undefined;
  }
}
