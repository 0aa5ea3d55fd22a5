import type { Clock } from '@trellis/core';
import type { RunHook, RunHookContext, RunResources } from '@trellis/engine';

/** How often a run start applies its DAG's `histRetentionDays` (per DAG, per process). */
const RETENTION_EVERY_MS = 60_000;

/** What the hook needs from the store. */
export interface RetentionOnStartStore {
  /** Deletes finished runs of the DAG older than `days`, with their logs and children. */
  deleteRunsOlderThan(dagName: string, days: number): Promise<number>;
}

/**
 * `histRetentionDays` at run start, as a run hook of the local runs: older finished runs of the
 * DAG go, with their logs and child runs. It runs beside the new run and never fails it; the run
 * log says what happened. Retention counts in days: once a minute per DAG is plenty, and a burst
 * of starts does not scan the DAG's history once per run. Child runs apply none.
 */
export class RetentionOnStart implements RunHook {
  readonly #retainedAt = new Map<string, number>();

  constructor(
    private readonly deps: { readonly store: RetentionOnStartStore; readonly clock: Clock },
  ) {}

  setUp(ctx: RunHookContext): Promise<RunResources> {
    if (ctx.record.parent === undefined) this.#apply(ctx);
    return Promise.resolve({});
  }

  #apply(ctx: RunHookContext): void {
    const { dag } = ctx;
    const now = this.deps.clock.now().getTime();
    if (now - (this.#retainedAt.get(dag.name) ?? -Infinity) < RETENTION_EVERY_MS) return;
    this.#retainedAt.set(dag.name, now);
    this.deps.store
      .deleteRunsOlderThan(dag.name, dag.histRetentionDays)
      .then((n) => {
        if (n > 0)
          ctx.log(
            `deleted ${n} run(s) older than ${dag.histRetentionDays} days (histRetentionDays)`,
          );
      })
      .catch((e: unknown) => ctx.log(`history clean-up failed: ${(e as Error).message}`));
  }
}
