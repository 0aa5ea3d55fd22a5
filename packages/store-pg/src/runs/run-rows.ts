import { alreadyExists, notFound, RunStatus } from '@trellis/core';
import type { RunListFilter, RunSnapshotData } from '@trellis/services';
import type { DagRunRecord, RunRef } from '@trellis/spec';
import { toRunSummary, type RunSummary } from '@trellis/store';

/** The primary key of a run: its root (itself for a top-level run) and its own name and id. */
export interface RunKey {
  readonly rootName: string;
  readonly rootRunId: string;
  readonly name: string;
  readonly dagRunId: string;
}

/** The key of `ref`, stored under `root` when it is a child run. */
export const keyOf = (ref: RunRef, root?: RunRef): RunKey => ({
  rootName: (root ?? ref).name,
  rootRunId: (root ?? ref).dagRunId,
  name: ref.name,
  dagRunId: ref.dagRunId,
});

/** The key a record is stored under (children under their root run). */
export const keyOfRecord = (r: DagRunRecord): RunKey =>
  keyOf(r, r.parent === undefined ? undefined : r.root);

export const keyValues = (k: RunKey): string[] => [k.rootName, k.rootRunId, k.name, k.dagRunId];

/** `WHERE` of one run by key, its values at $1..$4. */
export const WHERE_KEY = 'root_name = $1 AND root_run_id = $2 AND name = $3 AND dag_run_id = $4';

/** `createdAt` as a sortable number; null when it is not a timestamp (sorts as the oldest). */
const createdMs = (iso: string): number | null => {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? null : ms;
};

/** The columns a save writes, after the key: status, queue, created_ms, revision, summary, record. */
export const savedColumns = (r: DagRunRecord): unknown[] => [
  r.status,
  r.queue,
  createdMs(r.createdAt),
  r.revision,
  JSON.stringify(toRunSummary(r)),
  JSON.stringify(r),
];

export const INSERT_RUN = `INSERT INTO trellis_runs (root_name, root_run_id, name, dag_run_id,
  status, queue, created_ms, revision, summary, record, is_child, snapshot, log_dir)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
  ON CONFLICT DO NOTHING`;

export const insertValues = (
  r: DagRunRecord,
  snapshot: RunSnapshotData,
  logDir: string,
): unknown[] => [
  ...keyValues(keyOfRecord(r)),
  ...savedColumns(r),
  r.parent !== undefined,
  JSON.stringify(snapshot),
  logDir,
];

/** The listing's `WHERE` and values for a filter (top-level runs unless `includeChildren`). */
export const listWhere = (
  f: RunListFilter & { includeChildren?: boolean },
): { where: string; values: unknown[] } => {
  const parts: string[] = [];
  const values: unknown[] = [];
  const add = (sql: string, v: unknown): void => {
    values.push(v);
    parts.push(sql.replace('?', `$${values.length}`));
  };
  if (f.includeChildren !== true) parts.push('NOT is_child');
  if (f.name !== undefined) add('name = ?', f.name);
  if (f.status !== undefined) add('status = ?', f.status);
  if (f.fromMs !== undefined) add('created_ms >= ?', f.fromMs);
  if (f.toMs !== undefined) add('created_ms <= ?', f.toMs);
  if (f.names !== undefined) add('name = ANY(?)', [...f.names]);
  if (f.workerId !== undefined) add("summary->'owner'->>'workerId' = ?", f.workerId);
  if (f.dagRunIdContains !== undefined)
    add('strpos(lower(dag_run_id), ?) > 0', f.dagRunIdContains.toLowerCase());
  return { where: parts.length === 0 ? 'TRUE' : parts.join(' AND '), values };
};

export const NEWEST_FIRST = 'ORDER BY created_ms DESC NULLS LAST, dag_run_id DESC';

export const runNotFound = (ref: RunRef, root?: RunRef): Error =>
  root === undefined || (root.name === ref.name && root.dagRunId === ref.dagRunId)
    ? notFound('run', `${ref.name}/${ref.dagRunId}`)
    : notFound('child run', `${ref.name}/${ref.dagRunId} under ${root.name}/${root.dagRunId}`);

export const runTaken = (r: DagRunRecord): Error =>
  alreadyExists(r.parent === undefined ? 'run' : 'child run', r.dagRunId);

/** Statuses retention may delete (as the file store: final, or never started). */
const DELETABLE = new Set<RunStatus>([
  RunStatus.NotStarted,
  RunStatus.Failed,
  RunStatus.Cancelled,
  RunStatus.Succeeded,
  RunStatus.PartiallySucceeded,
]);

/** True when a run ended (or, never started, was created) before `cutoffMs`. */
export const isExpired = (s: RunSummary, cutoffMs: number): boolean =>
  DELETABLE.has(s.status) &&
  Date.parse(s.finishedAt !== '' ? s.finishedAt : s.createdAt) < cutoffMs;
