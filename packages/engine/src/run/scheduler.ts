import { NodeStatus } from '@trellis/core';
import type { NodeRecord } from '@trellis/spec';
import { readinessOf, type Readiness } from './readiness.js';
import { finishNode } from './record-keeping.js';
import type { RunContext } from './run-context.js';
import { runNode } from './step/run-node.js';

const WAIT: Readiness = { kind: 'wait' };

/**
 * A not-started node's readiness from its dependencies' states (a missing one counts as done).
 * A first dependency not yet ended decides at once, as in `readinessOf`: every pass asks this of
 * every waiting node (a chain's), so that common answer builds no list of states.
 */
const readinessOfNode = (ctx: RunContext, n: NodeRecord): Readiness => {
  const { depends } = n.step;
  const first = depends[0] === undefined ? undefined : ctx.byName.get(depends[0])?.status;
  if (first === NodeStatus.NotStarted || first === NodeStatus.Running) return WAIT;
  return readinessOf(
    depends.map((d) => ({
      status: ctx.byName.get(d)?.status ?? NodeStatus.Succeeded,
      continues: ctx.progress.continues.get(d) ?? false,
    })),
  );
};

/** Starts a ready node; `ended` runs when it has ended, however it ended. */
const start = (ctx: RunContext, n: NodeRecord, ended: () => void): void => {
  ctx.progress.running++;
  ctx.progress.started.add(n.step.name);
  runNode(ctx, n, false)
    .catch((e: unknown) =>
      finishNode(ctx, n, NodeStatus.Failed, `internal error: ${(e as Error).message}`),
    )
    .finally(() => {
      ctx.progress.running--;
      ended();
    });
};

/**
 * One pass over the nodes: ends the nodes their dependencies skip or cancel, starts the ready
 * ones as `maxActiveSteps` allows. Returns whether a node ended (another pass may find more).
 */
const pass = (ctx: RunContext, tick: () => void): boolean => {
  const { progress, stop } = ctx;
  const max = ctx.dag.maxActiveSteps;
  let changed = false;
  for (const n of ctx.record.nodes) {
    if (n.status !== NodeStatus.NotStarted || progress.started.has(n.step.name)) continue;
    if (stop.stopping || stop.timedOut) break;
    const full = max !== -1 && progress.running >= max;
    // without dependencies a node is ready: nothing to decide while no slot is free
    if (full && n.step.depends.length === 0) continue;
    const readiness = readinessOfNode(ctx, n);
    if (readiness.kind === 'wait') continue;
    if (readiness.kind !== 'ready') {
      progress.started.add(n.step.name);
      const status = readiness.kind === 'cancel' ? NodeStatus.Cancelled : NodeStatus.Skipped;
      finishNode(ctx, n, status, readiness.error);
      changed = true;
      continue;
    }
    if (full) continue;
    start(ctx, n, tick);
  }
  return changed;
};

/**
 * Starts every ready node as capacity allows; resolves when nothing runs and nothing can start.
 * Event-driven: each node's end runs the next pass.
 */
export const schedule = (ctx: RunContext): Promise<void> =>
  new Promise<void>((done) => {
    const tick = (): void => {
      let changed = true;
      while (changed) changed = pass(ctx, tick);
      if (ctx.progress.running === 0) done();
    };
    tick();
  });
