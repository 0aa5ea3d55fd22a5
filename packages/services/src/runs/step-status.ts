import {
  AppError,
  ErrorCode,
  RunStatus,
  badRequest,
  notFound,
  type NodeStatus,
} from '@trellis/core';
import type { RunRef } from '@trellis/spec';
import type { RunStorePort } from './run-store-port.js';

/** How often a step status change reads and tries again when the run changed meanwhile. */
const ATTEMPTS = 8;

/**
 * `RunService.setStepStatus`, as a compare-and-swap: two changes of one run at once (two steps,
 * two instances) both land, where a plain save of the second would overwrite the first at the
 * same revision.
 */
export const setStepStatus = async (
  store: Pick<RunStorePort, 'getRun' | 'saveRunIf'>,
  change: { ref: RunRef; stepName: string; status: NodeStatus; root?: RunRef | undefined },
): Promise<void> => {
  const { ref, stepName, root } = change;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const run = await store.getRun(ref, root ? { root } : {});
    const node = [...run.nodes, run.onSuccess, run.onFailure, run.onCancel, run.onExit].find(
      (n) => n?.step.name === stepName,
    );
    if (!node) throw notFound('step', `${stepName} in run ${ref.dagRunId} of DAG "${ref.name}"`);
    if (run.status === RunStatus.Running) {
      throw badRequest(
        `run ${ref.dagRunId} of DAG "${ref.name}" is still running: stop it or wait before changing a step's status`,
      );
    }
    const read = run.revision;
    node.status = change.status;
    run.revision++;
    if (await store.saveRunIf(run, read)) return;
  }
  throw new AppError(
    ErrorCode.ServiceUnavailable,
    `run ${ref.dagRunId} of DAG "${ref.name}" changed ${ATTEMPTS} times while step "${stepName}" was set: send the request again`,
  );
};
