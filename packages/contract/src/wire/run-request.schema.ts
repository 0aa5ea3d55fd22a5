import { z } from 'zod';
import { DagName, queryInt } from './common.schema.js';

/** Run ids as they appear in paths: letters, digits, `-`, `_` (or `latest` where allowed). */
export const RunId = z
  .string()
  .regex(
    /^[A-Za-z0-9_-]{1,64}$/,
    'must be a run id: letters, digits, "-" and "_", at most 64 characters',
  );
/** `{name}/{dagRunId}` of the run endpoints; children and steps extend it. */
export const RunPath = z.object({ name: DagName, dagRunId: RunId });
export const ChildRunPath = RunPath.extend({ childDAGRunId: RunId });
export const StepPath = RunPath.extend({ stepName: z.string().min(1) });
export const ChildStepPath = ChildRunPath.extend({ stepName: z.string().min(1) });

/** Log window (spec: log endpoints): tail > head > offset(+limit) > limit; at most 10000 lines. */
export const RunLogQuery = z.object({
  tail: queryInt(1, 10_000).optional(),
  head: queryInt(1, 10_000).optional(),
  offset: queryInt(1).optional(),
  limit: queryInt(1, 10_000).optional(),
  remoteNode: z.string().optional(),
});
/** A step's log: the window, and which stream (stdout by default). */
export const StepLogQuery = RunLogQuery.extend({
  stream: z.enum(['stdout', 'stderr']).default('stdout'),
});

/** POST /dags/{fileName}/start body. */
export const StartRunBody = z.object({
  params: z.string().optional(),
  dagRunId: RunId.optional(),
  singleton: z.boolean().optional(),
});
/** POST /dags/{fileName}/enqueue body: `queue` overrides the DAG's queue. */
export const EnqueueRunBody = z.object({
  params: z.string().optional(),
  dagRunId: RunId.optional(),
  queue: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/, {
      error: 'queue must be a queue name: letters, digits, "_", "." and "-", at most 64 characters',
    })
    .optional(),
});
/** POST /dag-runs body: a run of an inline YAML spec, stored as no DAG file. */
export const InlineRunBody = StartRunBody.extend({
  spec: z.string({ error: 'spec is required: the DAG as YAML text' }),
  name: DagName.optional(),
});

/** GET /dag-runs filters: no dates = all runs, newest first. */
export const RunListQuery = z.object({
  name: z.string().optional(),
  status: queryInt(0, 6).optional(),
  fromDate: queryInt(0).optional(),
  toDate: queryInt(0).optional(),
  dagRunId: z.string().optional(),
  page: queryInt(1).optional(),
  perPage: queryInt(1, 1000).optional(),
  remoteNode: z.string().optional(),
  tag: z
    .string()
    .optional()
    .describe('Beyond the spec: only runs of DAGs with this tag (case-insensitive)'),
  worker: z
    .string()
    .optional()
    .describe('Beyond the spec: only runs executed by this worker id (`local`: in the server)'),
});

/** PATCH .../steps/{stepName}/status body: the step statuses 0-5. */
export const StepStatusBody = z.object({
  status: z
    .number({ error: 'status must be an integer from 0 to 5' })
    .int('status must be an integer')
    .min(0, 'status must be 0-5')
    .max(5, 'status must be 0-5'),
});

/** Longest Idempotency-Key accepted. */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

const shown = (v: unknown): string => {
  const text = String(v);
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}...` : text);
};

/**
 * The `Idempotency-Key` header of start and enqueue (beyond the spec: docs/api.md, "Idempotent
 * triggers"): 1 to 255 printable ASCII characters.
 */
export const IdempotencyKeyHeaders = z.object({
  'Idempotency-Key': z
    .string()
    .refine(
      (k) => k.length >= 1 && k.length <= IDEMPOTENCY_KEY_MAX_LENGTH && /^[\x20-\x7e]+$/.test(k),
      {
        error: (iss) =>
          `${shown(iss.input)} (${String(iss.input).length} characters) is not an idempotency key: use 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} printable ASCII characters, for example a UUID`,
      },
    )
    .optional()
    .describe(
      'Makes the request idempotent for 24 h: the same key with the same body answers the first run again; with another body 409 already_exists',
    ),
});
