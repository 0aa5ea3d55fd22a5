import { NodeStatus } from '@trellis/core';

/** What a not-started node should do, given the states of its dependencies. */
export type Readiness =
  | { readonly kind: 'wait' }
  | { readonly kind: 'ready' }
  | { readonly kind: 'cancel'; readonly error: string }
  | { readonly kind: 'skip'; readonly error: string };

/** A dependency's final state as readiness needs it. */
export interface UpstreamState {
  readonly status: NodeStatus;
  /** The dependency's `continueOn` lets dependents run after this status. */
  readonly continues: boolean;
}

/**
 * Readiness of a node (as the peer does). Succeeded or partially succeeded dependencies are
 * fine; a failed one cancels this node ("upstream failed") unless it continues; a skipped one
 * skips it ("upstream skipped") unless it continues; a cancelled one cancels it; anything else
 * means wait.
 */
export const readinessOf = (upstream: readonly UpstreamState[]): Readiness => {
  let result: Readiness = { kind: 'ready' };
  for (const u of upstream) {
    switch (u.status) {
      case NodeStatus.Succeeded:
      case NodeStatus.PartiallySucceeded:
        break;
      case NodeStatus.Failed:
        if (!u.continues) return { kind: 'cancel', error: 'upstream failed' };
        break;
      case NodeStatus.Skipped:
        if (!u.continues && result.kind === 'ready')
          result = { kind: 'skip', error: 'upstream skipped' };
        break;
      case NodeStatus.Cancelled:
        return { kind: 'cancel', error: '' };
      case NodeStatus.NotStarted:
      case NodeStatus.Running:
        return { kind: 'wait' };
    }
  }
  return result;
};
