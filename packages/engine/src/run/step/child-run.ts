import { createHash } from 'node:crypto';
import { RunStatus, runStatusLabel } from '@trellis/core';
import type { ChildRunRef, NodeRecord } from '@trellis/spec';
import type { ChildRunRequest, ChildRunResult } from '../../ports/child-runner.js';
import type { StepLogs } from '../../ports/recorder.js';
import { expandChildParams, objectItemParams } from '../../vars/child-params.js';
import { childOutputJson } from '../../vars/output.js';
import { FAILED, type AttemptResult } from './attempt-result.js';
import { expandFull, type NodeScope } from './node-scope.js';
import type { RunContext } from '../run-context.js';

/** A child run as the parallel aggregate lists it. */
export interface ChildSummary {
  readonly name: string;
  readonly dagRunId: string;
  readonly params: string;
  readonly outputs: Record<string, string>;
  readonly status: string;
}

/** Where a child execution leaves its summary for the parallel aggregate. */
export interface ChildReport {
  summary?: ChildSummary;
}

const childRunId = (key: string): string =>
  createHash('sha256').update(key).digest('hex').slice(0, 32);

const childRequest = (
  ctx: RunContext,
  n: NodeRecord,
  scope: NodeScope,
  { target, params, dagRunId }: { target: string; params: string; dagRunId: string },
): ChildRunRequest => ({
  target,
  localDags: ctx.input.localDags ?? [],
  workingDir: ctx.vars.workingDir,
  params,
  dagRunId,
  parent: { name: ctx.record.name, dagRunId: ctx.record.dagRunId },
  root: ctx.record.root,
  workerSelector: n.step.workerSelector,
  env: scope.env,
  ...(scope.env.TRACEPARENT !== undefined ? { traceparent: scope.env.TRACEPARENT } : {}),
  abort: ctx.stop.signal,
  dryRun: ctx.input.dryRun ?? false,
});

/** The attempt's result from how the child ended; `json` is its output. */
const childResult = (res: ChildRunResult, dagRunId: string, json: string): AttemptResult => {
  if (res.error) return { ...FAILED, exitCode: 1, error: res.error, output: json, rawOutput: json };
  const ok = res.status === RunStatus.Succeeded || res.status === RunStatus.PartiallySucceeded;
  const label = runStatusLabel[res.status];
  return {
    ok,
    partial: res.status === RunStatus.PartiallySucceeded,
    cancelled: false,
    exitCode: ok ? 0 : 1,
    error: ok ? '' : `child DAG run ${dagRunId} of "${res.name}" ended with status: ${label}`,
    output: json,
    rawOutput: json,
  };
};

/**
 * The child's params: an object item's keys as named params, then the step's `params:` (so a
 * name in both takes the step's value); without `params:`, a text item is the params itself.
 */
const childParams = async (
  ctx: RunContext,
  n: NodeRecord,
  scope: NodeScope,
  item: string | undefined,
): Promise<string | { problem: string }> => {
  const fromItem = item === undefined ? undefined : objectItemParams(item);
  if (typeof fromItem === 'object') return fromItem;
  if (n.step.params === undefined) return fromItem ?? item ?? '';
  const own = await expandChildParams(n.step.params, (v) => expandFull(ctx, scope, v));
  return fromItem === undefined || own.trim() === '' ? (fromItem ?? own) : `${fromItem} ${own}`;
};

/**
 * Runs the node's child DAG (for one parallel `item`, when given) and waits for it. The child's
 * id is deterministic per run, step, params and attempt; the node lists it while it runs.
 */
export const runChild = async (
  ctx: RunContext,
  n: NodeRecord,
  scope: NodeScope,
  logs: StepLogs,
  item: string | undefined,
  out?: ChildReport,
): Promise<AttemptResult> => {
  const children = ctx.deps.children;
  if (!children) return { ...FAILED, error: 'child DAG runs are not available in this process' };
  const target = (await expandFull(ctx, scope, n.step.run ?? '')).trim();
  const params = await childParams(ctx, n, scope, item);
  if (typeof params !== 'string') return { ...FAILED, error: params.problem };
  const dagRunId = childRunId(
    `${ctx.record.dagRunId}:${n.step.name}:${params}:${n.doneCount}:${n.retryCount}`,
  );
  const ref: ChildRunRef = { dagRunId, name: target, params, status: RunStatus.Running };
  n.children = [...n.children, ref];
  ctx.saver.persist();
  const res = await children.run(childRequest(ctx, n, scope, { target, params, dagRunId }));
  n.children = n.children.map((c) =>
    c.dagRunId === dagRunId ? { ...c, name: res.name, status: res.status } : c,
  );
  ctx.saver.persist();
  const status = runStatusLabel[res.status];
  if (out) out.summary = { name: res.name, dagRunId, params, outputs: { ...res.outputs }, status };
  const json = childOutputJson(res.name, params, res.outputs);
  if (item === undefined || !n.step.parallel) logs.stdout.write(`${json}\n`);
  if (ctx.stop.aborted) return { ...FAILED, cancelled: true, error: 'stopped' };
  return childResult(res, dagRunId, json);
};
