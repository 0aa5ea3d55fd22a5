import { z } from 'zod';

/** Output variables of a node or a run, name -> value. */
const OutputVars = z.record(z.string(), z.string());

/**
 * One step's output variables and the child runs it started (beyond the spec: issue 17; the
 * child runs nest the same shape as the run).
 */
export const StepOutputsSchema = z.object({
  step: z.string(),
  status: z.number().int().min(0).max(6),
  statusLabel: z.string(),
  /** The step's `output:` variables; a child-DAG step's holds the child's `{name, params, outputs}` JSON. */
  outputs: OutputVars,
  get children(): z.ZodArray<typeof RunOutputsSchema> {
    return z.array(RunOutputsSchema);
  },
});

/**
 * What a run produced (GET /dag-runs/{name}/{dagRunId}/outputs): its merged output variables
 * (what a parent reads as `${VAR.outputs.NAME}`), and per step, with child runs nested.
 */
export const RunOutputsSchema = z.object({
  name: z.string(),
  dagRunId: z.string(),
  status: z.number().int().min(0).max(6),
  statusLabel: z.string(),
  /** A child run's params as its parent step passed them; `''` for a root run. */
  params: z.string(),
  outputs: OutputVars,
  get steps(): z.ZodArray<typeof StepOutputsSchema> {
    return z.array(StepOutputsSchema);
  },
});

/** The outputs endpoints' body: the envelope key follows `dagRunDetails`. */
export const RunOutputsResponse = z.object({ dagRunOutputs: RunOutputsSchema });

export type ApiRunOutputs = z.infer<typeof RunOutputsSchema>;
export type ApiStepOutputs = z.infer<typeof StepOutputsSchema>;
