import { z } from 'zod';
import { FileName, Pagination, RemoteNodeQuery, queryInt } from './common.schema.js';
import { ApiStepSchema, RunSummarySchema } from './run.schema.js';

/** A list of human-readable problems; `[]` when there are none (spec: Conventions). */
const Errors = z.array(z.string());

/** The `{fileName}` path parameter of every single-DAG endpoint (spec: Endpoints). */
export const DagFileParams = z.object({ fileName: FileName });

/**
 * GET /dags query (spec: Limits): out-of-range `page` or `perPage` is a 400 naming the parameter,
 * never clamped.
 */
export const ListDagsQuery = RemoteNodeQuery.extend({
  /** 1-based. @default 1 */
  page: queryInt(1).default(1),
  /** @default 50, at most 1000 */
  perPage: queryInt(1, 1000).default(50),
  /** Case-insensitive substring of the file name or the DAG name. */
  name: z.string().optional(),
  /** Case-insensitive exact tag. */
  tag: z.string().optional(),
  /** `nextRun`: earliest next start first, DAGs without a schedule last. @default 'name' */
  sort: z.enum(['name', 'nextRun'], { error: 'must be "name" or "nextRun"' }).default('name'),
  /** @default 'asc' */
  order: z.enum(['asc', 'desc'], { error: 'must be "asc" or "desc"' }).default('asc'),
});

/** `{condition, expected, error}` of a precondition. */
export const ConditionSchema = z.object({
  condition: z.string(),
  expected: z.string(),
  error: z.string(),
});

const ScheduleList = z.array(z.object({ expression: z.string() }));

/** DAG summary (spec: DAG list item, field `dag`); `schedule` holds the start schedules. */
export const DagSummarySchema = z.object({
  name: z.string(),
  group: z.string(),
  schedule: ScheduleList,
  description: z.string(),
  params: z.array(z.string()),
  /** `KEY="value" "positional"` text of the default parameters. */
  defaultParams: z.string(),
  tags: z.array(z.string()),
});

/** `{name, command}` of one lifecycle handler. */
const HandlerSchema = z.object({ name: z.string(), command: z.string() });

/**
 * DAG details (spec: DAG details). Beyond the spec's fields: `type`, `timeoutSec`, `queue`,
 * `workerSelector`, `skipIfSuccessful`, `runConfig`, `stopSchedule`, `restartSchedule`.
 */
export const DagDetailsSchema = DagSummarySchema.extend({
  /** `KEY=value` strings. */
  env: z.array(z.string()),
  logDir: z.string(),
  /** Keys only for the handlers the DAG defines. */
  handlerOn: z.object({
    success: HandlerSchema.optional(),
    failure: HandlerSchema.optional(),
    cancel: HandlerSchema.optional(),
    exit: HandlerSchema.optional(),
  }),
  steps: z.array(ApiStepSchema),
  /** `delaySec`, in seconds. */
  delay: z.number().int(),
  histRetentionDays: z.number().int(),
  preconditions: z.array(ConditionSchema),
  maxActiveRuns: z.number().int(),
  maxActiveSteps: z.number().int(),
  type: z.string(),
  timeoutSec: z.number().int(),
  queue: z.string(),
  workerSelector: z.record(z.string(), z.string()),
  skipIfSuccessful: z.boolean(),
  runConfig: z.object({ disableParamEdit: z.boolean(), disableRunIdEdit: z.boolean() }),
  stopSchedule: ScheduleList,
  restartSchedule: ScheduleList,
});

/**
 * DAG list item (spec: DAG list item). `latestDAGRun` is "not started" for a DAG that never ran.
 * Beyond the spec: `nextRun`, the next scheduled start (ISO 8601 UTC), `""` without a schedule.
 */
export const DagListItemSchema = z.object({
  fileName: z.string(),
  dag: DagSummarySchema,
  latestDAGRun: RunSummarySchema,
  suspended: z.boolean(),
  errors: Errors,
  nextRun: z.string(),
});

/** GET /dags response; `errors` names files that could not be read. */
export const ListDagsResponse = z.object({
  dags: z.array(DagListItemSchema),
  errors: Errors,
  pagination: Pagination,
});

/** POST /dags body: `name` is the file name; a given `spec` is validated first. */
export const CreateDagBody = z.object({
  name: FileName,
  /** YAML text; absent or blank = a minimal DAG with one echo step. */
  spec: z.string().optional(),
});

/** POST /dags 201 response. */
export const CreateDagResponse = z.object({ name: z.string() });

/** GET /dags/search query: `q` is a case-insensitive substring, or `/regex/`. */
export const SearchDagsQuery = RemoteNodeQuery.extend({
  q: z
    .string({ error: 'is required: the text to search for, or /regex/' })
    .min(1, 'is required: the text to search for, or /regex/'),
});

/** One match: the line with two lines of context each side, its number, the snippet's first line. */
export const SearchMatchSchema = z.object({
  line: z.string(),
  /** 1-based number of the matching line. */
  lineNumber: z.number().int(),
  /** 1-based number of the first line of `line`. */
  startLine: z.number().int(),
});

/** Search result (spec: Search result); `name` is the file name. */
export const SearchResultSchema = z.object({
  name: z.string(),
  dag: DagSummarySchema,
  matches: z.array(SearchMatchSchema),
});

/** GET /dags/search response. */
export const SearchDagsResponse = z.object({
  results: z.array(SearchResultSchema),
  errors: Errors,
});

/** GET /dags/tags response: unique tags, lower-cased and sorted. */
export const DagTagsResponse = z.object({ tags: z.array(z.string()), errors: Errors });

/**
 * POST /dags/validate body; `name` is used when the spec has none. A missing `spec` is answered
 * 200 with the problem in `errors` (spec: "always 200"); a field of the wrong JSON type is a
 * malformed request, 400 (docs/decisions.md).
 */
export const ValidateDagBody = z.object({
  spec: z.string().optional(),
  name: z.string().optional(),
});

/** POST /dags/validate response: always 200; `dag` may be partial (spec: Errors, rule 1). */
export const ValidateDagResponse = z.object({
  valid: z.boolean(),
  errors: Errors,
  dag: DagSummarySchema.optional(),
});

/** A DAG defined in the same file (spec: DAG details, `localDags`). */
export const LocalDagSchema = z.object({ name: z.string(), dag: DagDetailsSchema, errors: Errors });

/** A start schedule entry with the zone it fires in and its next fire times. */
const ScheduleFiresSchema = z.object({
  /** As written, with any `CRON_TZ=` prefix. */
  expression: z.string(),
  /** The cron fields alone. */
  cron: z.string(),
  /** The IANA zone the entry fires in: its `CRON_TZ=`, or the server's zone. */
  timeZone: z.string(),
  /** The next fire times (at most 3), ISO 8601 UTC; empty when it never fires again. */
  nextFires: z.array(z.string()),
});

/**
 * GET /dags/{fileName} response. Beyond the spec: `schedules`, the DAG's start schedules with
 * their zone and next fire times.
 */
export const DagDetailsResponse = z.object({
  dag: DagDetailsSchema,
  localDags: z.array(LocalDagSchema),
  latestDAGRun: RunSummarySchema,
  suspended: z.boolean(),
  errors: Errors,
  schedules: z.array(ScheduleFiresSchema),
});

/** GET /dags/{fileName}/spec response: the YAML text as stored. */
export const DagSpecResponse = z.object({
  dag: DagDetailsSchema,
  spec: z.string(),
  errors: Errors,
});

/** PUT /dags/{fileName}/spec body. */
export const PutDagSpecBody = z.object({ spec: z.string() });

/** PUT /dags/{fileName}/spec response: the problems; the file is written only when there are none. */
export const PutDagSpecResponse = z.object({ errors: Errors });

/** POST /dags/{fileName}/rename body. */
export const RenameDagBody = z.object({ newFileName: FileName });

/** POST /dags/{fileName}/suspend body. */
export const SuspendDagBody = z.object({ suspend: z.boolean() });

export type ApiDagSummary = z.infer<typeof DagSummarySchema>;
export type ApiDagDetails = z.infer<typeof DagDetailsSchema>;
export type ApiDagListItem = z.infer<typeof DagListItemSchema>;
export type ListDagsResponse = z.infer<typeof ListDagsResponse>;
export type DagDetailsResponse = z.infer<typeof DagDetailsResponse>;
export type ApiSearchResult = z.infer<typeof SearchResultSchema>;
export type ValidateDagResponse = z.infer<typeof ValidateDagResponse>;
