import { z } from 'zod';

/** Longest long-poll on a run (`timeout`, seconds); docs/decisions.md, "Waiting for a run". */
export const WAIT_TIMEOUT_MAX_SECONDS = 300;
/** `timeout` when `waitFor` is given without it. */
export const WAIT_TIMEOUT_DEFAULT_SECONDS = 60;

/** What a run can be waited for: only its end. */
export const WAIT_CONDITIONS = ['final'] as const;

const once = (name: string) => `give ${name} once`;

/** A whole number of seconds from 0 to 300, named in its error with the value given. */
const waitSeconds = z
  .string({ error: once('timeout') })
  .superRefine((v, ctx) => {
    if (!/^\d{1,6}$/.test(v) || Number(v) > WAIT_TIMEOUT_MAX_SECONDS)
      ctx.addIssue({
        code: 'custom',
        message: `"${v}" is not allowed: give whole seconds from 0 to ${WAIT_TIMEOUT_MAX_SECONDS}`,
      });
  })
  .transform(Number);

/**
 * GET /dag-runs/{name}/{dagRunId} query: the spec's `remoteNode`, and the long-poll beside it
 * (`waitFor=final&timeout=<seconds>`).
 */
export const RunDetailsQuery = z
  .object({
    remoteNode: z.string().optional(),
    waitFor: z
      .string({ error: once('waitFor') })
      .superRefine((v, ctx) => {
        if (!(WAIT_CONDITIONS as readonly string[]).includes(v))
          ctx.addIssue({
            code: 'custom',
            message: `"${v}" is not a wait condition: the one there is is final`,
          });
      })
      .optional()
      .describe(
        'final: answer once the run is final (failed, cancelled, finished, partial success), or at the timeout with its current state',
      ),
    timeout: waitSeconds
      .optional()
      .describe(
        `With waitFor: the longest wait in seconds, 0 to ${WAIT_TIMEOUT_MAX_SECONDS}; default ${WAIT_TIMEOUT_DEFAULT_SECONDS}`,
      ),
  })
  .superRefine((q, ctx) => {
    if (q.timeout !== undefined && q.waitFor === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['timeout'],
        message: 'applies only with waitFor=final: add waitFor=final or leave timeout out',
      });
  });

/** GET /events query: filters (absent = every event). */
export const EventsQuery = z.object({
  dag: z.string().optional().describe('Only events of runs of this DAG (its name)'),
  dagRunId: z
    .string()
    .optional()
    .describe('Only events of this run and of the child runs under it'),
  type: z
    .string()
    .optional()
    .describe(
      'Comma-separated event types or nouns: run, step, queue, worker, or e.g. run:finished',
    ),
  lastEventId: z
    .string()
    .regex(/^\d+$/, 'must be an event id (a whole number)')
    .optional()
    .describe('Resume after this event id (as the Last-Event-ID header; the header wins)'),
});

/** GET /dag-runs/{name}/{dagRunId}/steps/{stepName}/log/stream query. */
export const StepLogStreamQuery = z.object({
  stream: z.enum(['stdout', 'stderr']).default('stdout'),
  offset: z
    .string()
    .regex(/^[1-9]\d{0,9}$/, 'must be a line number from 1')
    .transform(Number)
    .optional()
    .describe('First line to send (1-based); default 1. Last-Event-ID (a line number) wins'),
});

/** The `data` of one Server-Sent Event of GET /events (its `id:` line carries `id` too). */
export const RunEventSchema = z.object({
  id: z.number().int(),
  type: z.string(),
  time: z.string(),
  dag: z.string().optional(),
  dagRunId: z.string().optional(),
  rootDagRunId: z.string().optional(),
  data: z.record(z.string(), z.unknown()),
});
export type ApiRunEvent = z.infer<typeof RunEventSchema>;

/** The `data` of one `log` event of the log stream: lines `from`..`to` of the step's log. */
export const LogLinesEventSchema = z.object({
  from: z.number().int(),
  to: z.number().int(),
  content: z.string(),
});
