/**
 * Values that steps produce for later steps: the `output` variable of a step, and the JSON a
 * child DAG step writes (spec: Step fields `output`; Executors, child DAG output).
 */

/**
 * The value of a step's `output` variable from its captured stdout: surrounding whitespace,
 * trailing newlines included, is trimmed (as the peer does). Inner text is kept as is.
 */
export const trimOutput = (captured: string): string => captured.trim();

/**
 * The stdout of a child DAG step, and so the value of its `output` variable: pretty JSON
 * `{name, params, outputs: {NAME: value}}` (spec: Executors, "Child DAG output is structured
 * as..."), read later as `${VAR.outputs.NAME}`. `params` is the child run's params text as
 * recorded; `outputs` holds the output variables of the child's steps, in the given order.
 * The peer adds `dagRunId` and `status`; the spec names only these three fields.
 */
export const childOutputJson = (
  name: string,
  params: string,
  outputs: Readonly<Record<string, string>>,
): string => JSON.stringify({ name, params, outputs: { ...outputs } }, null, 2);
