import { Cron } from 'croner';
import type { Clock } from '@trellis/core';
import type { Dag, ScheduleEntry } from '@trellis/spec';

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
}

type Kind = 'start' | 'stop' | 'restart';

const RUNNING = 1;
const SUCCEEDED = 4;
const MINUTE_MS = 60_000;

/** Compiled cron patterns, by zone and expression. */
const patterns = new Map<string, Cron | null>();
const cronOf = (e: ScheduleEntry): Cron | null => {
  const key = `${e.timezone ?? ''}\u0000${e.cron}`;
  let c = patterns.get(key);
  if (c === undefined) {
    try {
      c = new Cron(e.cron, { paused: true, ...(e.timezone ? { timezone: e.timezone } : {}) });
    } catch {
      c = null; // validated at parse time; an entry that does not compile never fires
    }
    if (patterns.size > 10_000) patterns.clear();
    patterns.set(key, c);
  }
  return c;
};

/** The first fire time of `e` after `after` (exclusive), or undefined. */
const nextFire = (e: ScheduleEntry, after: Date): Date | undefined =>
  cronOf(e)?.nextRun(after) ?? undefined;

/** The last fire time of `e` strictly before `before`, or undefined. */
const previousFire = (e: ScheduleEntry, before: Date): Date | undefined =>
  cronOf(e)?.previousRuns(1, before)[0] ?? undefined;

/**
 * The cron loop (spec: `schedule`, with `start`/`stop`/`restart` lists and `CRON_TZ=`; peer
 * section 4.17). It wakes at every minute boundary, reads the DAG files anew (so added, changed
 * and removed files count without a restart), and fires each entry whose time came since the
 * previous tick: once, even when the timer was late or the process was busy for several
 * minutes. A fire time never fires twice, even when the clock goes backwards. Suspended DAGs
 * produce nothing.
 */
export class CronScheduler {
  /** Last fire time handled per entry (file, kind, expression). */
  readonly #fired = new Map<string, number>();
  #prevTick: Date | undefined;

  constructor(private readonly deps: CronSchedulerDeps) {}

  /** Runs until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    this.#prevTick ??= this.deps.clock.now();
    while (!signal.aborted) {
      const now = this.deps.clock.now();
      const wait = MINUTE_MS - (now.getTime() % MINUTE_MS);
      await this.deps.clock.sleep(wait, signal).catch(() => undefined);
      if (signal.aborted) return;
      await this.tick();
    }
  }

  /** Fires every entry due since the previous tick. Exposed for tests and benchmarks. */
  async tick(): Promise<void> {
    const now = this.deps.clock.now();
    const since = this.#prevTick ?? now;
    // The clock went backwards: nothing before `since` fires again (#fired guards each entry).
    const from = now.getTime() < since.getTime() ? now : since;
    let dags: readonly ScheduledDag[] = [];
    try {
      dags = await this.deps.dags();
    } catch (e) {
      this.deps.log(`scheduler: reading the DAG files failed: ${(e as Error).message}`);
    }
    const live = new Set<string>();
    const due: Promise<void>[] = [];
    for (const d of dags) {
      if (d.suspended) continue;
      const fires: [Kind, ScheduleEntry, Date][] = [];
      for (const kind of ['stop', 'restart', 'start'] as const) {
        for (const entry of d.dag.schedule[kind]) {
          const key = `${d.fileName}\u0000${kind}\u0000${entry.timezone ?? ''}\u0000${entry.cron}`;
          live.add(key);
          const at = nextFire(entry, from);
          if (at === undefined || at.getTime() > now.getTime()) continue;
          if ((this.#fired.get(key) ?? -Infinity) >= at.getTime()) continue;
          this.#fired.set(key, at.getTime());
          fires.push([kind, entry, at]);
        }
      }
      // DAGs fire together; one DAG's fires keep their order (stop, restart, then start).
      if (fires.length > 0)
        due.push(
          (async () => {
            for (const [kind, entry, at] of fires) await this.#fire(kind, d, entry, at);
          })(),
        );
    }
    await Promise.all(due);
    for (const key of this.#fired.keys()) if (!live.has(key)) this.#fired.delete(key);
    this.#prevTick = now.getTime() > since.getTime() ? now : since;
    this.deps.onTick?.(now);
  }

  async #fire(kind: Kind, d: ScheduledDag, entry: ScheduleEntry, at: Date): Promise<void> {
    const what = `${kind} schedule "${entry.timezone ? `CRON_TZ=${entry.timezone} ` : ''}${entry.cron}" of DAG "${d.dag.name}" at ${at.toISOString()}`;
    try {
      if (kind === 'start') {
        const skip = await this.#skipStart(d, entry, at);
        if (skip !== undefined) {
          this.deps.log(`scheduler: ${what}: skipped (${skip})`);
          return;
        }
        await this.deps.actions.start(d, at);
      } else {
        const latest = await this.deps.actions.latestRun(d.dag.name);
        if (latest?.status !== RUNNING) {
          this.deps.log(`scheduler: ${what}: nothing to do (no run is running)`);
          return;
        }
        await (kind === 'stop' ? this.deps.actions.stop(d) : this.deps.actions.restart(d));
      }
    } catch (e) {
      this.deps.log(`scheduler: ${what}: failed: ${(e as Error).message}`);
    }
  }

  /**
   * Why a start fire is skipped (peer section 4.17), or undefined: `skipIfSuccessful` and the
   * latest run succeeded and started since the previous fire time of this entry.
   */
  async #skipStart(d: ScheduledDag, entry: ScheduleEntry, at: Date): Promise<string | undefined> {
    if (!d.dag.skipIfSuccessful) return undefined;
    const latest = await this.deps.actions.latestRun(d.dag.name);
    if (latest?.status !== SUCCEEDED || latest.startedAt === '') return undefined;
    const started = Date.parse(latest.startedAt);
    const prev = previousFire(entry, at)?.getTime() ?? -Infinity;
    if (started >= prev && started < at.getTime())
      return `skipIfSuccessful: run started ${latest.startedAt} succeeded since the previous fire`;
    return undefined;
  }
}
