/**
 * Attribute names of Trellis spans (docs/operations.md, "Tracing"). Run spans carry the `dag.*`
 * ones, step spans (handlers included) also the `step.*` ones.
 */
export const Attr = {
  DagName: 'dag.name',
  RunId: 'dag.run.id',
  RootRunId: 'dag.run.root_id',
  ParentRunId: 'dag.run.parent_id',
  /** Status label of the run (`finished`, `failed`, ...). */
  RunStatus: 'dag.run.status',
  /** Status value of the run (0-6). */
  RunStatusCode: 'dag.run.status_code',
  StepName: 'step.name',
  /** Status label of the step (`finished`, `failed`, `skipped`, ...). */
  StepStatus: 'step.status',
  StepStatusCode: 'step.status_code',
  StepExitCode: 'step.exit_code',
  StepRetryCount: 'step.retry_count',
  /** True for `handlerOn` nodes (onSuccess, onFailure, onCancel, onExit). */
  StepHandler: 'step.handler',
} as const;
