import { NodeStatus } from '@trellis/core';
import type { NodeRecord, Step } from '@trellis/spec';

/** A fresh node record for a step that has not started. */
export const newNodeRecord = (step: Step): NodeRecord => ({
  step,
  stdout: '',
  stderr: '',
  startedAt: '',
  finishedAt: '',
  status: NodeStatus.NotStarted,
  retryCount: 0,
  doneCount: 0,
  retriedAt: '',
  children: [],
  childrenRepeated: [],
  error: '',
  outputs: {},
});

/** Statuses after which a node will not run again in this run. */
export const isDone = (s: NodeStatus): boolean =>
  s === NodeStatus.Succeeded ||
  s === NodeStatus.Failed ||
  s === NodeStatus.Cancelled ||
  s === NodeStatus.Skipped ||
  s === NodeStatus.PartiallySucceeded;

/**
 * Each step's ancestors, nearest first (breadth-first over `depends`): a step sees the outputs
 * of its ancestors only, and the nearest wins for the same name (as the peer does).
 */
export const ancestorsByStep = (steps: readonly Step[]): Map<string, string[]> => {
  const deps = new Map(steps.map((s) => [s.name, s.depends]));
  const out = new Map<string, string[]>();
  for (const s of steps) {
    const seen = new Set<string>();
    const order: string[] = [];
    let frontier = [...s.depends];
    while (frontier.length > 0) {
      const next: string[] = [];
      for (const d of frontier) {
        if (seen.has(d) || d === s.name) continue;
        seen.add(d);
        order.push(d);
        next.push(...(deps.get(d) ?? []));
      }
      frontier = next;
    }
    out.set(s.name, order);
  }
  return out;
};
