import { NodeStatus } from '@trellis/core';
import type { ContinueOn } from '@trellis/spec';
import { shouldContinue } from './continue-on.js';

/** How a step's last execution ends its node. */
export interface StepVerdict {
  readonly status: NodeStatus;
  readonly error: string;
  /** Dependents may run (`continueOn`). */
  readonly continues: boolean;
  /** Failed, but dependents may run; the run can still partially succeed. */
  readonly failedButContinued: boolean;
}

/** The last execution's result as the verdict needs it. */
export interface FinalResult {
  readonly ok: boolean;
  readonly partial: boolean;
  readonly exitCode: number | null;
  readonly error: string;
  readonly rawOutput?: string;
}

/**
 * The node's final status (as the peer does): success or partial success; a failure that
 * `continueOn` lets dependents pass, marked succeeded with `markSuccess` (the error text is
 * kept); otherwise failed.
 */
export const stepVerdict = (c: ContinueOn, result: FinalResult): StepVerdict => {
  if (result.ok) {
    const status = result.partial ? NodeStatus.PartiallySucceeded : NodeStatus.Succeeded;
    return { status, error: '', continues: false, failedButContinued: false };
  }
  const continues = shouldContinue(
    c,
    NodeStatus.Failed,
    result.exitCode ?? undefined,
    result.rawOutput,
  );
  if (continues && c.markSuccess)
    return {
      status: NodeStatus.Succeeded,
      error: result.error,
      continues,
      failedButContinued: false,
    };
  return {
    status: NodeStatus.Failed,
    error: result.error,
    continues,
    failedButContinued: continues,
  };
};
