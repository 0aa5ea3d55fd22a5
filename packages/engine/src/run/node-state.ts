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
 * Each step's ancestors, nearest first (breadth-first over `depends`), computed when first asked
 * for and kept: a step sees the outputs of its ancestors only, and the nearest wins for the same
 * name (as the peer does). Lazily, as most runs have no outputs to look up and a chain's ancestor
 * lists add up to steps² names.
 */
export const ancestorsByStep = (steps: readonly Step[]): ((name: string) => readonly string[]) => {
  const deps = new Map(steps.map((s) => [s.name, s.depends]));
  const known = new Map<string, string[]>();
  return (name) => {
    let order = known.get(name);
    if (order !== undefined) return order;
    const seen = new Set<string>();
    order = [];
    let frontier = [...(deps.get(name) ?? [])];
    while (frontier.length > 0) {
      const next: string[] = [];
      for (const d of frontier) {
        if (seen.has(d) || d === name) continue;
        seen.add(d);
        order.push(d);
        next.push(...(deps.get(d) ?? []));
      }
      frontier = next;
    }
    known.set(name, order);
    return order;
  };
};
