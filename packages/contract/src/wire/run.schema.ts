import { z } from 'zod';
import { WaitReasonSchema } from './wait-reason.schema.js';

/** Step object as returned by the API (spec: "Step object as returned by the API"). */
export const ApiStepSchema = z
  .object({
    name: z.string(),
    id: z.string(),
    description: z.string(),
    dir: z.string(),
    command: z.string(),
    args: z.array(z.string()),
    cmdWithArgs: z.string(),
    script: z.string(),
    shell: z.string(),
    stdout: z.string(),
    stderr: z.string(),
    output: z.string(),
    depends: z.array(z.string()),
    run: z.string(),
    params: z.string(),
    preconditions: z.array(
      z.object({ condition: z.string(), expected: z.string(), error: z.string() }),
    ),
    repeatPolicy: z.object({ repeat: z.boolean(), interval: z.number().int() }).passthrough(),
    mailOnError: z.boolean(),
  })
  .passthrough();

/** A child run of a node (spec: node `children`). */
export const ChildRefSchema = z.object({
  dagRunId: z.string(),
  params: z.string(),
  name: z.string(),
  status: z.number().int(),
  statusLabel: z.string(),
});

/** Node (spec: "Node (step result)"). */
export const NodeSchema = z.object({
  step: ApiStepSchema,
  stdout: z.string(),
  stderr: z.string(),
  startedAt: z.string(),
  finishedAt: z.string(),
  status: z.number().int().min(0).max(6),
  statusLabel: z.string(),
  retryCount: z.number().int(),
  doneCount: z.number().int(),
  children: z.array(ChildRefSchema),
  childrenRepeated: z.array(ChildRefSchema),
  error: z.string(),
});

/** DAG run summary (spec: "DAG run summary"). */
export const RunSummarySchema = z.object({
  rootDAGRunName: z.string(),
  rootDAGRunId: z.string(),
  parentDAGRunName: z.string(),
  parentDAGRunId: z.string(),
  dagRunId: z.string(),
  name: z.string(),
  status: z.number().int().min(0).max(6),
  statusLabel: z.string(),
  queuedAt: z.string(),
  startedAt: z.string(),
  finishedAt: z.string(),
  log: z.string(),
  params: z.string(),
});

/** DAG run details (spec: "DAG run details"). */
export const RunDetailsSchema = RunSummarySchema.extend({
  nodes: z.array(NodeSchema),
  onExit: NodeSchema.nullable(),
  onSuccess: NodeSchema.nullable(),
  onFailure: NodeSchema.nullable(),
  onCancel: NodeSchema.nullable(),
  preconditions: z.array(
    z.object({ condition: z.string(), expected: z.string(), error: z.string() }),
  ),
  error: z.string(),
  /** A queued run's reason to wait (beyond the spec); absent for other runs. */
  waitReason: WaitReasonSchema.optional(),
});

/** Grid data item (spec: "Grid data item"). */
export const GridItemSchema = z.object({ name: z.string(), history: z.array(z.number().int()) });

/** GET /dags/{fileName}/dag-runs response: recent runs and the per-step history grid. */
export const DagRunsResponse = z.object({
  dagRuns: z.array(RunSummarySchema),
  gridData: z.array(GridItemSchema),
});

/** Log chunk (spec: "Log chunk"). */
export const LogChunkSchema = z.object({
  content: z.string(),
  lineCount: z.number().int(),
  totalLines: z.number().int(),
  hasMore: z.boolean(),
  isEstimate: z.boolean(),
  /**
   * Beside the spec: present (true) when a write to the log failed (a full disk), so its content
   * is incomplete; `truncatedReason` names the file and the error (docs/decisions.md).
   */
  truncated: z.literal(true).optional(),
  truncatedReason: z.string().optional(),
});

export type ApiStep = z.infer<typeof ApiStepSchema>;
export type ApiChildRef = z.infer<typeof ChildRefSchema>;
export type ApiNode = z.infer<typeof NodeSchema>;
export type ApiRunSummary = z.infer<typeof RunSummarySchema>;
export type ApiRunDetails = z.infer<typeof RunDetailsSchema>;
export type ApiGridItem = z.infer<typeof GridItemSchema>;
export type DagRunsResponse = z.infer<typeof DagRunsResponse>;
export type ApiLogChunk = z.infer<typeof LogChunkSchema>;
