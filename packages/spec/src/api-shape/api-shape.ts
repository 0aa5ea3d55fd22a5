import { handlerNodeName, HANDLER_KINDS, type Dag, type ScheduleEntry } from '../model/dag.js';
import type { Condition, Step } from '../model/step.js';
import { envToStrings } from '../normalize/env.js';
import { paramsToStrings, toDefaultParamsString } from '../normalize/params.js';

/** `{condition, expected, error}` as the API shows preconditions. */
export interface ApiCondition {
  condition: string;
  expected: string;
  error: string;
}

/**
 * The step object of the spec ("Step object as returned by the API"), every listed field always
 * present (empty string / empty list / false when unset), plus the definition details a client
 * needs to show the step (executor, policies, parallel).
 */
export interface ApiStep {
  name: string;
  id: string;
  description: string;
  dir: string;
  command: string;
  args: string[];
  cmdWithArgs: string;
  script: string;
  shell: string;
  stdout: string;
  stderr: string;
  output: string;
  depends: string[];
  run: string;
  params: string;
  preconditions: ApiCondition[];
  repeatPolicy: {
    repeat: boolean;
    interval: number;
    mode: string;
    limit: number;
    condition: string;
    expected: string;
    exitCode: number[];
  };
  retryPolicy: {
    limit: number | string;
    intervalSec: number | string;
    backoff: number;
    maxIntervalSec: number;
    exitCode: number[];
  } | null;
  continueOn: {
    failure: boolean;
    skipped: boolean;
    exitCode: number[];
    output: string[];
    markSuccess: boolean;
  };
  parallel: { items: string[]; variable: string; maxConcurrent: number } | null;
  mailOnError: boolean;
  signalOnStop: string;
  executor: { type: string; config: Record<string, unknown> };
  workerSelector: Record<string, string>;
  env: string[];
}

/** `dag` of a DAG list item and of search results (spec: "DAG list item"). */
export interface ApiDagSummary {
  name: string;
  group: string;
  schedule: { expression: string }[];
  description: string;
  params: string[];
  defaultParams: string;
  tags: string[];
}

/** `{name, command}` of one lifecycle handler. */
export interface ApiHandler {
  name: string;
  command: string;
}

/** Field `dag` of the single-DAG response (spec: "DAG details"). */
export interface ApiDagDetails extends ApiDagSummary {
  env: string[];
  logDir: string;
  handlerOn: { success?: ApiHandler; failure?: ApiHandler; cancel?: ApiHandler; exit?: ApiHandler };
  steps: ApiStep[];
  delay: number;
  histRetentionDays: number;
  preconditions: ApiCondition[];
  maxActiveRuns: number;
  maxActiveSteps: number;
  type: string;
  timeoutSec: number;
  queue: string;
  workerSelector: Record<string, string>;
  skipIfSuccessful: boolean;
  runConfig: { disableParamEdit: boolean; disableRunIdEdit: boolean };
  stopSchedule: { expression: string }[];
  restartSchedule: { expression: string }[];
}

const REDACTED = '********';
/** Keys whose text values are credentials: passwords, auth strings, tokens, secret headers. */
const isSecretKey = (key: string): boolean =>
  /^(password|auth)$/i.test(key) || /authorization|token|secret|api[-_]?key|passw/i.test(key);

/** Copies an executor config with secrets replaced, so definitions can be shown safely. */
const redact = (v: unknown): unknown => {
  if (Array.isArray(v)) return v.map(redact);
  if (typeof v === 'object' && v !== null) {
    return Object.fromEntries(
      Object.entries(v).map(([k, val]) => [
        k,
        isSecretKey(k) && typeof val === 'string' ? REDACTED : redact(val),
      ]),
    );
  }
  return v;
};

/** A precondition as the API shows it: absent `expected` and `error` are empty strings. */
export const toApiCondition = (c: Condition): ApiCondition => ({
  condition: c.condition,
  expected: c.expected ?? '',
  error: c.error ?? '',
});

const toApiSchedule = (entries: readonly ScheduleEntry[]): { expression: string }[] =>
  entries.map((e) => ({ expression: e.expression }));

/** A normalised step as the API returns it. */
export const toApiStep = (s: Step): ApiStep => ({
  name: s.name,
  id: s.id ?? '',
  description: s.description,
  dir: s.dir,
  command: s.command ?? '',
  args: [...s.args],
  cmdWithArgs: s.cmdWithArgs ?? '',
  script: s.script ?? '',
  shell: s.shell ?? '',
  stdout: s.stdout ?? '',
  stderr: s.stderr ?? '',
  output: s.output ?? '',
  depends: [...s.depends],
  run: s.run ?? '',
  params: s.params ?? '',
  preconditions: s.preconditions.map(toApiCondition),
  repeatPolicy: {
    repeat: s.repeatPolicy !== undefined,
    interval: s.repeatPolicy?.intervalSec ?? 0,
    mode: s.repeatPolicy?.mode ?? '',
    limit: s.repeatPolicy?.limit ?? 0,
    condition: s.repeatPolicy?.condition ?? '',
    expected: s.repeatPolicy?.expected ?? '',
    exitCode: [...(s.repeatPolicy?.exitCode ?? [])],
  },
  retryPolicy: s.retryPolicy
    ? {
        limit: s.retryPolicy.limit,
        intervalSec: s.retryPolicy.intervalSec,
        backoff: s.retryPolicy.backoff,
        maxIntervalSec: s.retryPolicy.maxIntervalSec,
        exitCode: [...s.retryPolicy.exitCode],
      }
    : null,
  continueOn: {
    failure: s.continueOn.failure,
    skipped: s.continueOn.skipped,
    exitCode: [...s.continueOn.exitCode],
    output: [...s.continueOn.output],
    markSuccess: s.continueOn.markSuccess,
  },
  parallel: s.parallel
    ? {
        items: [...s.parallel.items],
        variable: s.parallel.variable ?? '',
        maxConcurrent: s.parallel.maxConcurrent,
      }
    : null,
  mailOnError: s.mailOnError,
  signalOnStop: s.signalOnStop,
  executor: { type: s.executor.type, config: redact(s.executor.config) as Record<string, unknown> },
  workerSelector: { ...s.workerSelector },
  env: envToStrings(s.env),
});

/** The DAG summary of list items and search results. `schedule` holds the start schedules. */
export const toApiDagSummary = (d: Dag): ApiDagSummary => ({
  name: d.name,
  group: d.group,
  schedule: toApiSchedule(d.schedule.start),
  description: d.description,
  params: paramsToStrings(d.params),
  defaultParams: toDefaultParamsString(d.params),
  tags: [...d.tags],
});

/** The DAG details of the single-DAG response. */
export const toApiDagDetails = (d: Dag): ApiDagDetails => {
  const handlerOn: ApiDagDetails['handlerOn'] = {};
  for (const kind of HANDLER_KINDS) {
    const h = d.handlerOn[kind];
    if (h)
      handlerOn[kind] = {
        name: handlerNodeName[kind],
        command: h.cmdWithArgs ?? h.script ?? h.run ?? '',
      };
  }
  return {
    ...toApiDagSummary(d),
    env: envToStrings(d.env),
    logDir: d.logDir ?? '',
    handlerOn,
    steps: d.steps.map(toApiStep),
    delay: d.delaySec,
    histRetentionDays: d.histRetentionDays,
    preconditions: d.preconditions.map(toApiCondition),
    maxActiveRuns: d.maxActiveRuns,
    maxActiveSteps: d.maxActiveSteps,
    type: d.type,
    timeoutSec: d.timeoutSec,
    queue: d.queue ?? '',
    workerSelector: { ...d.workerSelector },
    skipIfSuccessful: d.skipIfSuccessful,
    runConfig: { ...d.runConfig },
    stopSchedule: toApiSchedule(d.schedule.stop),
    restartSchedule: toApiSchedule(d.schedule.restart),
  };
};
