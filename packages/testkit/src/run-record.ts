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
