import type { NodeRecord, ParallelSpec } from '@trellis/spec';
import type { StepLogs } from '../../ports/recorder.js';
import { splitParallelItems } from '../../vars/items.js';
import { FAILED, type AttemptResult } from './attempt-result.js';
import type { ChildReport, ChildSummary } from './child-run.js';
import { executeOne } from './execute-one.js';
import { expandFull, type NodeScope } from './node-scope.js';
import type { RunContext } from '../run-context.js';

/** One parallel item's execution. */
interface ItemResult {
  readonly item: string;
  readonly r: AttemptResult;
  readonly child?: ChildSummary;
}

/** The items of a `parallel` step: listed, or a variable's value split; an error when unusable. */
const parallelItems = async (
  ctx: RunContext,
  p: ParallelSpec,
  scope: NodeScope,
  isChild: boolean,
): Promise<string[] | string> => {
  let items = [...p.items];
  if (p.variable !== undefined) {
    const value = await expandFull(ctx, scope, p.variable);
    items = value === p.variable ? [] : splitParallelItems(value);
  }
  if (items.length === 0) return 'parallel has no items';
  if (items.length > 1000) return `parallel has ${items.length} items; at most 1000 are allowed`;
  return isChild ? [...new Set(items)] : items; // identical params would be the same child run
};

/** The aggregate output: child runs as a summary with their outputs, else each item's output. */
const parallelOutput = (
  results: readonly ItemResult[],
  failed: number,
  isChild: boolean,
): string => {
  if (!isChild) return JSON.stringify(results.map((x) => x.r.output ?? ''));
  const summaries = results.flatMap((x) => (x.child ? [x.child] : []));
  return JSON.stringify(
    {
      summary: { total: results.length, succeeded: results.length - failed, failed },
      results: summaries,
      outputs: summaries
        .filter((s) => s.status === 'finished' || s.status === 'partial success')
        .map((s) => s.outputs),
    },
    null,
    2,
  );
};

/** The attempt of all items: ok when every item is, with the first failure's exit code. */
const aggregate = (results: readonly ItemResult[], output: string): AttemptResult => {
  const failed = results.filter((x) => !x.r.ok);
  return {
    ok: failed.length === 0,
    partial: results.some((x) => x.r.partial),
    cancelled: false,
    exitCode: failed.length === 0 ? 0 : (failed[0]?.r.exitCode ?? 1),
    error:
      failed.length === 0
        ? ''
        : `parallel execution failed: ${failed.length} of ${results.length} item(s) failed (first: ${failed[0]?.r.error ?? ''})`,
    output,
    rawOutput: output,
  };
};

/** Executes the items, at most `maxConcurrent` at a time (0: all), until done or aborted. */
const executeItems = async (
  ctx: RunContext,
  n: NodeRecord,
  scope: NodeScope,
  logs: StepLogs,
  items: readonly string[],
  maxConcurrent: number,
): Promise<ItemResult[]> => {
  const results: ItemResult[] = [];
  let next = 0;
  const limit = maxConcurrent > 0 ? maxConcurrent : items.length;
  const worker = async (): Promise<void> => {
    while (next < items.length && !ctx.stop.aborted) {
      const item = items[next++] ?? '';
      const child: ChildReport = {};
      const r = await executeOne(ctx, n, scope, logs, item, child);
      results.push({ item, r, ...(child.summary ? { child: child.summary } : {}) });
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
};

/** One attempt of a node: a single execution, or one per item of a `parallel` step. */
export const attempt = async (
  ctx: RunContext,
  n: NodeRecord,
  scope: NodeScope,
  logs: StepLogs,
): Promise<AttemptResult> => {
  const p = n.step.parallel;
  if (!p) return executeOne(ctx, n, scope, logs, undefined);
  const isChild = n.step.executor.type === 'dag';
  const items = await parallelItems(ctx, p, scope, isChild);
  if (typeof items === 'string') return { ...FAILED, error: items };
  const results = await executeItems(ctx, n, scope, logs, items, p.maxConcurrent);
  if (ctx.stop.aborted) return { ...FAILED, cancelled: true, error: ctx.stop.reason };
  const output = parallelOutput(results, results.filter((x) => !x.r.ok).length, isChild);
  if (isChild) logs.stdout.write(`${output}\n`);
  return aggregate(results, output);
};
