import { childRunResult } from '@trellis/engine';
import type { NodeStatus, RunStatus } from '@trellis/core';
import { HANDLER_RECORD_KEYS } from '@trellis/spec';
import type { ChildRunRef, DagRunRecord, NodeRecord, RunRef } from '@trellis/spec';

/** What one run produced (GET /dag-runs/{name}/{dagRunId}/outputs; docs/api.md, "Outputs"). */
export interface RunOutputs {
  readonly name: string;
  readonly dagRunId: string;
  readonly status: RunStatus;
  /** The run's params as its parent step passed them (`KEY="value"` text); `''` for a root run. */
  readonly params: string;
  /**
   * Every node's output variables merged in step order (a later step's value wins): what a parent
   * step reads as `${VAR.outputs.NAME}` (spec: Executors, "Child DAG output is structured as").
   */
  readonly outputs: Readonly<Record<string, string>>;
  /** One entry per step, then the handler nodes that ran. */
  readonly steps: readonly StepOutputs[];
}

/** One node's output variables and the child runs it started, each with its own outputs. */
export interface StepOutputs {
  readonly step: string;
  readonly status: NodeStatus;
  /** The node's `output:` variables, name -> value (a child-DAG step's holds the child's JSON). */
  readonly outputs: Readonly<Record<string, string>>;
  readonly children: readonly RunOutputs[];
}

/** The store reads the outputs need (a part of `RunReadStore`). */
interface OutputsStore {
  getRun(ref: RunRef, opts?: { root?: RunRef }): Promise<DagRunRecord>;
  listChildren(root: RunRef): Promise<readonly { readonly dagRunId: string }[]>;
}

const nodesOf = (run: DagRunRecord): NodeRecord[] => [
  ...run.nodes,
  ...HANDLER_RECORD_KEYS.flatMap((k) => (run[k] ? [run[k]] : [])),
];

/**
 * The outputs of `run` and, nested under the steps that started them, of its child runs (read
 * from the store under `root`, where every descendant of a root run is kept). A child whose record
 * is gone (retention, or a worker that never reported it) shows its reference with no outputs.
 */
export const runOutputs = async (
  store: OutputsStore,
  run: DagRunRecord,
  root: RunRef,
  params?: string,
): Promise<RunOutputs> => {
  const known = new Set((await store.listChildren(root)).map((c) => c.dagRunId));
  const childOf = async (ref: ChildRunRef): Promise<RunOutputs> => {
    if (!known.has(ref.dagRunId)) return missingChild(ref);
    const child = await store.getRun({ name: ref.name, dagRunId: ref.dagRunId }, { root });
    return runOutputs(store, child, root, ref.params);
  };
  const steps: StepOutputs[] = [];
  for (const n of nodesOf(run)) {
    const children: RunOutputs[] = [];
    for (const c of n.children) children.push(await childOf(c));
    steps.push({ step: n.step.name, status: n.status, outputs: { ...n.outputs }, children });
  }
  return {
    name: run.name,
    dagRunId: run.dagRunId,
    status: run.status,
    params: params ?? (await paramsFromParent(store, run, root)),
    outputs: childRunResult(run.name, run).outputs,
    steps,
  };
};

/** A child's params as its parent's node lists them; `''` for a root run or a lost parent. */
const paramsFromParent = async (
  store: OutputsStore,
  run: DagRunRecord,
  root: RunRef,
): Promise<string> => {
  if (run.parent === undefined) return '';
  const parent = await store.getRun(run.parent, { root }).catch(() => undefined);
  const ref = parent && nodesOf(parent).flatMap((n) => n.children);
  return ref?.find((c) => c.dagRunId === run.dagRunId)?.params ?? '';
};

const missingChild = (ref: ChildRunRef): RunOutputs => ({
  name: ref.name,
  dagRunId: ref.dagRunId,
  status: ref.status,
  params: ref.params,
  outputs: {},
  steps: [],
});
