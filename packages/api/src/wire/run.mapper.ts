import { nodeStatusLabel, runStatusLabel } from '@trellis/core';
import { toApiStep, type ChildRunRef, type DagRunRecord, type NodeRecord } from '@trellis/spec';
import type { RunSummaryRecord } from '@trellis/services';
import type { ApiNode, ApiRunDetails, ApiRunSummary } from '@trellis/contract';

/** Run `params` as JSON object text in order (docs/decisions.md). */
export const paramsJsonText = (params: readonly { name: string; value: string }[]): string =>
  `{${params.map((p) => `${JSON.stringify(p.name)}:${JSON.stringify(p.value)}`).join(',')}}`;

/**
 * A run summary as the spec shapes it. For a DAG that never ran (`undefined`), the "not started"
 * summary: empty ids and timestamps, status 0, name of the DAG.
 */
export const toApiRunSummary = (
  r: RunSummaryRecord | DagRunRecord | undefined,
  dagName = '',
): ApiRunSummary =>
  r === undefined
    ? {
        rootDAGRunName: dagName,
        rootDAGRunId: '',
        parentDAGRunName: '',
        parentDAGRunId: '',
        dagRunId: '',
        name: dagName,
        status: 0,
        statusLabel: runStatusLabel[0],
        queuedAt: '',
        startedAt: '',
        finishedAt: '',
        log: '',
        params: '{}',
      }
    : {
        rootDAGRunName: r.root.name,
        rootDAGRunId: r.root.dagRunId,
        parentDAGRunName: r.parent?.name ?? '',
        parentDAGRunId: r.parent?.dagRunId ?? '',
        dagRunId: r.dagRunId,
        name: r.name,
        status: r.status,
        statusLabel: runStatusLabel[r.status],
        queuedAt: r.queuedAt,
        startedAt: r.startedAt,
        finishedAt: r.finishedAt,
        log: r.log,
        params: paramsJsonText(r.params),
      };

const toApiChild = (c: ChildRunRef) => ({
  dagRunId: c.dagRunId,
  params: c.params,
  name: c.name,
  status: c.status,
  statusLabel: runStatusLabel[c.status],
});

/** A node as the spec shapes it. */
export const toApiNode = (n: NodeRecord): ApiNode => ({
  step: toApiStep(n.step) as unknown as ApiNode['step'],
  stdout: n.stdout,
  stderr: n.stderr,
  startedAt: n.startedAt,
  finishedAt: n.finishedAt,
  status: n.status,
  statusLabel: nodeStatusLabel[n.status],
  retryCount: n.retryCount,
  doneCount: n.doneCount,
  children: n.children.map(toApiChild),
  childrenRepeated: n.childrenRepeated.map(toApiChild),
  error: n.error,
});

/** Run details: the summary, nodes, handler nodes (null when absent) and preconditions. */
export const toApiRunDetails = (r: DagRunRecord): ApiRunDetails => ({
  ...toApiRunSummary(r),
  nodes: r.nodes.map(toApiNode),
  onExit: r.onExit ? toApiNode(r.onExit) : null,
  onSuccess: r.onSuccess ? toApiNode(r.onSuccess) : null,
  onFailure: r.onFailure ? toApiNode(r.onFailure) : null,
  onCancel: r.onCancel ? toApiNode(r.onCancel) : null,
  preconditions: r.preconditions.map((p) => ({ ...p })),
  error: r.error,
});

/**
 * Run history grid (spec: Grid data item): one row per step that ran, in `stepOrder` (the DAG's
 * step order; steps no longer in the DAG after them, in the order the runs list them), then the
 * handler rows present; `history[i]` is the step's status in run `i` (0 when the step was not in that run).
 */
export const toGridData = (
  runs: readonly DagRunRecord[],
  stepOrder: readonly string[] = [],
): { name: string; history: number[] }[] => {
  const seen = [...new Set(runs.flatMap((r) => r.nodes.map((n) => n.step.name)))];
  const at = (name: string): number => {
    const i = stepOrder.indexOf(name);
    return i < 0 ? stepOrder.length : i;
  };
  const names = seen.sort((a, b) => at(a) - at(b)); // stable: others keep their run order
  const rows = names.map((name) => ({
    name,
    history: runs.map((r) => r.nodes.find((n) => n.step.name === name)?.status ?? 0),
  }));
  for (const key of ['onSuccess', 'onFailure', 'onCancel', 'onExit'] as const) {
    if (runs.some((r) => r[key]))
      rows.push({ name: key, history: runs.map((r) => r[key]?.status ?? 0) });
  }
  return rows;
};
