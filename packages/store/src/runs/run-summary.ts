import type { DagRunRecord, RunRef } from '@trellis/spec';

/** The parts of a record that only run details carry (spec: "DAG run details"). */
type DetailKeys = 'nodes' | 'onExit' | 'onSuccess' | 'onFailure' | 'onCancel' | 'preconditions';

/**
 * A run record without its nodes, handler nodes and preconditions: what the index keeps per run
 * and what listings return (spec: "DAG run summary", in domain form).
 */
export type RunSummary = Omit<DagRunRecord, DetailKeys>;

/** The summary of a record (a copy; later changes to the record do not show through). */
export const toRunSummary = (r: DagRunRecord): RunSummary => {
  const s: RunSummary = {
    name: r.name,
    dagRunId: r.dagRunId,
    root: { name: r.root.name, dagRunId: r.root.dagRunId },
    status: r.status,
    createdAt: r.createdAt,
    queuedAt: r.queuedAt,
    startedAt: r.startedAt,
    finishedAt: r.finishedAt,
    log: r.log,
    params: r.params.map((p) => ({ name: p.name, value: p.value })),
    error: r.error,
    queue: r.queue,
    revision: r.revision,
  };
  if (r.parent !== undefined) s.parent = { name: r.parent.name, dagRunId: r.parent.dagRunId };
  if (r.owner !== undefined) s.owner = { ...r.owner };
  return s;
};

/** True for a child run (one with a parent); children are stored under their root run. */
export const isChildRun = (r: { readonly parent?: RunRef | undefined }): boolean =>
  r.parent !== undefined;

/** The root a child run is stored under, or undefined for a top-level run. */
export const storageRootOf = (r: {
  readonly root: RunRef;
  readonly parent?: RunRef | undefined;
}): RunRef | undefined => (r.parent === undefined ? undefined : r.root);

/**
 * True when two summaries differ only in `revision`, which changes on every save: the index gets
 * a new line only when a field a listing shows has changed.
 */
export const sameSummaryFields = (a: RunSummary, b: RunSummary): boolean =>
  JSON.stringify({ ...a, revision: 0 }) === JSON.stringify({ ...b, revision: 0 });
