import { RunStatus } from '@trellis/core';
import {
  tokenizeParams,
  type Dag,
  type DagRunRecord,
  type RunOwner,
  type RunRef,
} from '@trellis/spec';
import { newNodeRecord } from '../run/node-state.js';
import { applyParamOverrides, parseParamsInput } from '../vars/params.js';

/** A run's parameters as recorded: name and value, in the DAG's order. */
export type RunParams = DagRunRecord['params'];

/** What a new run record needs beyond its DAG. */
export interface NewRunRecordInput {
  readonly dagRunId: string;
  readonly params: RunParams;
  readonly status: RunStatus;
  /** The record's creation time (ISO). */
  readonly now: string;
  /** The run log's path (the store's `runLogPath`; '' in a dry run). */
  readonly log: string;
  /** The process that executes it; none while it waits for a worker. */
  readonly owner?: RunOwner | undefined;
  /** Node records to start from (retry). @default every step not started */
  readonly nodes?: DagRunRecord['nodes'] | undefined;
  readonly parent?: RunRef | undefined;
  /** @default the run itself */
  readonly root?: RunRef | undefined;
  readonly traceparent?: string | undefined;
  /** @default the DAG's queue, else its name */
  readonly queue?: string | undefined;
  readonly queuedAt?: string | undefined;
}

/**
 * The one place a run record is built, for every host (the local dispatcher, a worker, admission
 * for a queued run). Complete from the start (every node listed), so the engine need not save it
 * before its first step.
 */
export const newRunRecord = (dag: Dag, o: NewRunRecordInput): DagRunRecord => ({
  name: dag.name,
  dagRunId: o.dagRunId,
  root: o.root ?? { name: dag.name, dagRunId: o.dagRunId },
  ...(o.parent ? { parent: o.parent } : {}),
  status: o.status,
  createdAt: o.now,
  queuedAt: o.queuedAt ?? '',
  startedAt: o.status === RunStatus.Running ? o.now : '',
  finishedAt: '',
  log: o.log,
  params: o.params,
  nodes: o.nodes ?? dag.steps.map(newNodeRecord),
  preconditions: [],
  error: '',
  ...(o.owner ? { owner: o.owner } : {}),
  queue: o.queue ?? dag.queue ?? dag.name,
  revision: 0,
  ...(o.traceparent !== undefined ? { traceparent: o.traceparent } : {}),
});

/**
 * The DAG's params with the caller's overrides applied by name and position. `input` is JSON
 * object text or the `KEY=value "quoted" positional` form (`allowJson` false: only the latter, as
 * a child step's `params:` is written; the values given are then `literal`, final). Returns the
 * problem as a string when `input` is malformed.
 */
export const resolveRunParams = (
  dag: Dag,
  input: string | undefined,
  allowJson = true,
): RunParams | string => {
  if (input === undefined || input.trim() === '')
    return dag.params.map((p) => ({ name: p.name, value: p.value }));
  const tokens = allowJson ? parseParamsInput(input) : tokenizeParams(input);
  if (typeof tokens === 'string') return tokens;
  // A child's params were expanded by its parent: evaluating them again would run a backtick or
  // expand a `$` inside a value (the defaults of the child's DAG are kept as the same objects).
  return applyParamOverrides(dag.params, tokens).map((p) =>
    allowJson || dag.params.includes(p)
      ? { name: p.name, value: p.value }
      : { name: p.name, value: p.value, literal: true },
  );
};

/** The key of a run among those one process executes: children under their root. */
export const hostedRunKey = (record: RunRef & { root: RunRef }): string =>
  `${record.root.name}/${record.root.dagRunId}/${record.name}/${record.dagRunId}`;
