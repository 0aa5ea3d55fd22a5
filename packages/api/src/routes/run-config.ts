import { badRequest } from '@trellis/core';
import type { Dag } from '@trellis/spec';

/** What a start or enqueue request may set that a DAG's `runConfig` can forbid. */
export interface RunChoices {
  readonly params?: string | undefined;
  readonly dagRunId?: string | undefined;
}

/**
 * Refuses params or a run id the DAG does not let callers choose (spec: root field `runConfig`,
 * `disableParamEdit` / `disableRunIdEdit`): the web UI greys those fields out, and the API holds
 * the same line for every other client. Blank `params` count as none. Errors: bad_request.
 */
export const checkRunConfig = (dag: Dag, body: RunChoices): void => {
  const { disableParamEdit, disableRunIdEdit } = dag.runConfig;
  if (disableParamEdit && body.params !== undefined && body.params.trim() !== '')
    throw badRequest(
      `DAG "${dag.name}" does not take params from the caller (runConfig.disableParamEdit is true): leave out "params" to run it with its defaults`,
      { field: 'params' },
    );
  if (disableRunIdEdit && body.dagRunId !== undefined)
    throw badRequest(
      `DAG "${dag.name}" does not let the caller choose the run id (runConfig.disableRunIdEdit is true): leave out "dagRunId" and one is generated`,
      { field: 'dagRunId' },
    );
};
