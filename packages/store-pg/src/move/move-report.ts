/** What a copy did with one kind of thing (runs, child runs, logs). */
export interface KindCount {
  /** Copied because the target did not have it. */
  added: number;
  /** Copied again because the source's is newer (a higher revision, a run still going). */
  updated: number;
  /** Left alone: the target has it already (as new as the source's). */
  already: number;
}

/** The counts of a `trellis migrate store` pass, per kind; `failed` lists what was skipped. */
export interface MoveReport {
  readonly runs: KindCount;
  readonly childRuns: KindCount;
  /** Queued runs (status 5: the queue ledger) among the runs and child runs added or updated. */
  queued: number;
  readonly logs: KindCount;
  /** Lines written into the target's logs. */
  logLines: number;
  /** The DAGs' suspend flags (never `updated`: a flag is there or not). */
  readonly suspendFlags: KindCount;
  /** Runs that could not be copied (a corrupt record...), with why; the rest is copied. */
  readonly failed: { readonly run: string; readonly reason: string }[];
}

export const emptyReport = (): MoveReport => ({
  runs: { added: 0, updated: 0, already: 0 },
  childRuns: { added: 0, updated: 0, already: 0 },
  queued: 0,
  logs: { added: 0, updated: 0, already: 0 },
  logLines: 0,
  suspendFlags: { added: 0, updated: 0, already: 0 },
  failed: [],
});

/** What became of one run: new in the target, replaced with a newer one, or already there. */
export type RunOutcome = keyof KindCount;

/** `n added, n updated, n already there`. */
export const countLine = (c: KindCount): string =>
  `${c.added} added, ${c.updated} updated, ${c.already} already there`;

/** The report as the CLI prints it, one line per kind. */
export const reportLines = (r: MoveReport): string[] => [
  `runs: ${countLine(r.runs)}`,
  `child runs: ${countLine(r.childRuns)}`,
  `queued runs (the queue ledger) copied: ${r.queued}`,
  `logs: ${countLine(r.logs)} (${r.logLines} lines written)`,
  `suspend flags: ${r.suspendFlags.added} added, ${r.suspendFlags.already} already there`,
  ...(r.failed.length > 0 ? [`failed: ${r.failed.length} run(s)`] : []),
];

/**
 * False for a running run: its logs may grow without a new revision, so each pass copies them
 * again. Any other run changes only with a new revision (a queued run has no logs yet).
 */
export const isSettled = (status: number): boolean => status !== 1;
