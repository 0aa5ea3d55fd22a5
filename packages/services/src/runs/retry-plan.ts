import { NodeStatus } from '@trellis/core';
import type { NodeRecord } from '@trellis/spec';
import { newNodeRecord } from '@trellis/engine';

/**
 * The nodes a retry starts from (docs/decisions.md: succeeded steps keep their result).
 * Without `stepName`: every node that did not succeed (or get skipped) runs again, and so does
 * everything downstream of it. With `stepName`: only that step runs again.
 */
export const retryNodes = (previous: readonly NodeRecord[], stepName?: string): NodeRecord[] => {
  const keep = (n: NodeRecord): boolean =>
    n.status === NodeStatus.Succeeded ||
    n.status === NodeStatus.Skipped ||
    n.status === NodeStatus.PartiallySucceeded;
  const reset = new Set<string>();
  if (stepName !== undefined) reset.add(stepName);
  else {
    for (const n of previous) if (!keep(n)) reset.add(n.step.name);
    let grew = true;
    while (grew) {
      grew = false;
      for (const n of previous) {
        if (reset.has(n.step.name)) continue;
        if (n.step.depends.some((d) => reset.has(d))) {
          reset.add(n.step.name);
          grew = true;
        }
      }
    }
  }
  return previous.map((n) => (reset.has(n.step.name) ? newNodeRecord(n.step) : structuredClone(n)));
};
