import { RunStatus } from '@trellis/core';
import type { Dag, DagRunRecord } from '@trellis/spec';

/** A fresh top-level run record for `dag`, as a start service would create it. */
export const makeRunRecord = (
  dag: Dag,
  dagRunId = 'run-0001',
  createdAt = '2026-01-02T03:04:05.000Z',
): DagRunRecord => ({
  name: dag.name,
  dagRunId,
  root: { name: dag.name, dagRunId },
  status: RunStatus.NotStarted,
  createdAt,
  queuedAt: '',
  startedAt: '',
  finishedAt: '',
  log: '/logs/run.log',
  params: dag.params.map((p) => ({ name: p.name, value: p.value })),
  nodes: [],
  preconditions: [],
  error: '',
  queue: dag.queue ?? dag.name,
  revision: 0,
});

/**
 * A run record for tests: a top-level run of DAG `etl` created at 2026-01-02T03:04:05Z,
 * not started, revision 0.
 */
export const makeRecord = (over: Partial<DagRunRecord> = {}): DagRunRecord => {
  const name = over.name ?? 'etl';
  const dagRunId = over.dagRunId ?? 'run-0001';
  return {
    name,
    dagRunId,
    root: { name, dagRunId },
    status: RunStatus.NotStarted,
    createdAt: '2026-01-02T03:04:05Z',
    queuedAt: '',
    startedAt: '',
    finishedAt: '',
    log: '',
    params: [],
    nodes: [],
    preconditions: [],
    error: '',
    queue: name,
    revision: 0,
    ...over,
  };
};

/** A child record of `root`, started by `root` itself. */
export const makeChildRecord = (
  root: DagRunRecord,
  over: Partial<DagRunRecord> = {},
): DagRunRecord =>
  makeRecord({
    name: 'child',
    dagRunId: 'child-0001',
    root: { name: root.name, dagRunId: root.dagRunId },
    parent: { name: root.name, dagRunId: root.dagRunId },
    ...over,
  });

/** `iso` plus `ms` milliseconds, as ISO text. */
export const isoPlus = (iso: string, ms: number): string =>
  new Date(Date.parse(iso) + ms).toISOString();
