import { dirname } from 'node:path';
import type { YamlPath } from '../yaml/problem.js';
import type { Dag } from '../model/dag.js';
import { readConditions } from './conditions.js';
import { checkKeys, isRecord, readBool, readInt, readString, show, type Ctx } from './context.js';
import { readDagHead } from './dag-head.js';
import { readHandlers, readSteps } from './dag-steps.js';
import { readEnvEntries } from './env.js';
import { readParams } from './params.js';
import { readMail, readOtel, readRegistryAuths, readSmtp } from './root-objects.js';
import { readSchedule } from './schedule.js';
import type { StepDefaults } from './step-defaults.js';
import { readWorkerSelector } from './step.js';

export const ROOT_KEYS = [
  'name',
  'description',
  'tags',
  'group',
  'type',
  'schedule',
  'skipIfSuccessful',
  'restartWaitSec',
  'maxActiveRuns',
  'maxActiveSteps',
  'timeoutSec',
  'delaySec',
  'maxCleanUpTimeSec',
  'preconditions',
  'precondition',
  'runConfig',
  'params',
  'env',
  'dotenv',
  'workingDir',
  'logDir',
  'histRetentionDays',
  'maxOutputSize',
  'container',
  'ssh',
  'queue',
  'otel',
  'mailOn',
  'errorMail',
  'infoMail',
  'smtp',
  'handlerOn',
  'workerSelector',
  'registryAuths',
  'steps',
] as const;

export interface NormalizeDagOptions {
  /** Path of the DAG file: default name (first document) and default workingDir. */
  readonly location?: string;
  /** A name given by the caller; wins over the document's own `name`. */
  readonly name?: string;
  /** True for the first document of a file, which may take its name from the file. */
  readonly isMain: boolean;
  /** Directory for the default workingDir when there is no file. */
  readonly cwd: string;
  /** Names of the DAGs in the same file (a `run:` target may be one of them). */
  readonly localDagNames?: ReadonlySet<string>;
  /** Whether a `run:` target exists in the DAGs folder; absent = not checked. */
  readonly dagExists?: (nameOrPath: string) => boolean;
}

const pos = (n: number): { min: number } => ({ min: n });
const at = (k: string): YamlPath => [k];
const UNLIMITED_OR_AT_LEAST_1 = {
  min: 1,
  special: -1,
  hint: '-1 (unlimited) or an integer of at least 1',
};

/** The fields read after the steps that decide where runs go and whom they tell. */
interface DagPlacement {
  readonly workingDir: string;
  readonly logDir: string | undefined;
  readonly queue: string | undefined;
  readonly otel: Dag['otel'];
  readonly errorMail: Dag['errorMail'];
  readonly infoMail: Dag['infoMail'];
  readonly smtp: Dag['smtp'];
}

/**
 * Normalises one YAML document into a DAG. Always returns a DAG (fields with problems fall back to
 * their defaults), so callers can show a partial definition next to its problems.
 */
export const normalizeDag = (ctx: Ctx, doc: unknown, opts: NormalizeDagOptions): Dag => {
  const m = readRootMapping(ctx, doc);
  const head = readDagHead(ctx, m, opts);
  const defaults: StepDefaults = {
    hasContainer: head.container !== undefined,
    ...(head.ssh ? { ssh: head.ssh } : {}),
    checkRunTarget: runTargetChecker(head.name, opts),
  };
  const steps = isRecord(doc) ? readSteps(ctx, m.steps, head.type ?? 'chain', defaults) : [];
  const handlerOn = readHandlers(ctx, m.handlerOn, defaults);
  const place = readPlacement(ctx, m, opts);
  const { container, ssh } = head;
  const { logDir, queue, otel, errorMail, infoMail, smtp } = place;
  return {
    name: head.name ?? '',
    ...(opts.location ? { location: opts.location } : {}),
    description: readString(ctx, m.description, at('description')) ?? '',
    group: readString(ctx, m.group, at('group')) ?? '',
    tags: head.tags,
    type: head.type ?? 'chain',
    ...readRunLimits(ctx, m),
    preconditions: [
      ...readConditions(ctx, m.preconditions, at('preconditions')),
      ...readConditions(ctx, m.precondition, at('precondition')),
    ],
    runConfig: readRunConfig(ctx, head.runConfig),
    params: readParams(ctx, m.params, at('params')),
    env: readEnvEntries(ctx, m.env, at('env')),
    dotenv: head.dotenv,
    workingDir: place.workingDir,
    ...(logDir !== undefined ? { logDir } : {}),
    histRetentionDays: readInt(ctx, m.histRetentionDays, at('histRetentionDays'), pos(1)) ?? 30,
    maxOutputSize: readInt(ctx, m.maxOutputSize, at('maxOutputSize'), pos(1)) ?? 1_048_576,
    ...(container ? { container } : {}),
    ...(ssh ? { ssh } : {}),
    ...(queue !== undefined && queue.trim() !== '' ? { queue: queue.trim() } : {}),
    ...(otel ? { otel } : {}),
    mailOn: readMailOn(ctx, head.mailOn),
    ...(errorMail ? { errorMail } : {}),
    ...(infoMail ? { infoMail } : {}),
    ...(smtp ? { smtp } : {}),
    handlerOn,
    workerSelector: readWorkerSelector(ctx, m.workerSelector, at('workerSelector')),
    registryAuths: readRegistryAuths(ctx, m.registryAuths, at('registryAuths')),
    steps,
  };
};

/** The document as a mapping (empty when it is not one, which is reported), keys checked. */
const readRootMapping = (ctx: Ctx, doc: unknown): Record<string, unknown> => {
  const root: YamlPath = [];
  const m = isRecord(doc) ? doc : {};
  if (!isRecord(doc))
    ctx.report(root, `a DAG must be a mapping of fields (name, steps, ...), got ${show(doc)}`);
  checkKeys(ctx, m, root, ROOT_KEYS, 'a DAG');
  return m;
};

/** Why a step's `run:` target cannot be used, or undefined when it can (or is not checked). */
const runTargetChecker =
  (name: string | undefined, opts: NormalizeDagOptions) =>
  (target: string): string | undefined => {
    if (name !== undefined && target === name)
      return `runs its own DAG ${show(target)}, which would never end`;
    if (opts.localDagNames?.has(target) || !opts.dagExists || opts.dagExists(target))
      return undefined;
    return `child DAG ${show(target)} is neither in this file nor in the DAGs folder: check the name, or create it`;
  };

/** workingDir, logDir, queue, otel and the mail settings. */
const readPlacement = (
  ctx: Ctx,
  m: Record<string, unknown>,
  opts: NormalizeDagOptions,
): DagPlacement => {
  const workingDir =
    readString(ctx, m.workingDir, at('workingDir')) ??
    (opts.location ? dirname(opts.location) : opts.cwd);
  const logDir = readString(ctx, m.logDir, at('logDir'));
  const queue = readString(ctx, m.queue, at('queue'));
  if (queue !== undefined && queue.trim() === '')
    ctx.report(at('queue'), 'queue name is empty: remove it or name a queue');
  return {
    workingDir,
    logDir,
    queue,
    otel: readOtel(ctx, m.otel, at('otel')),
    errorMail: readMail(ctx, m.errorMail, at('errorMail'), 'errorMail'),
    infoMail: readMail(ctx, m.infoMail, at('infoMail'), 'infoMail'),
    smtp: readSmtp(ctx, m.smtp, at('smtp')),
  };
};

/** `schedule` and the limits and waits of runs and steps. */
const readRunLimits = (
  ctx: Ctx,
  m: Record<string, unknown>,
): Pick<
  Dag,
  | 'schedule'
  | 'skipIfSuccessful'
  | 'restartWaitSec'
  | 'maxActiveRuns'
  | 'maxActiveSteps'
  | 'timeoutSec'
  | 'delaySec'
  | 'maxCleanUpTimeSec'
> => ({
  schedule: readSchedule(ctx, m.schedule, at('schedule')),
  skipIfSuccessful: readBool(ctx, m.skipIfSuccessful, at('skipIfSuccessful')) ?? false,
  restartWaitSec: readInt(ctx, m.restartWaitSec, at('restartWaitSec'), pos(0)) ?? 0,
  maxActiveRuns: readInt(ctx, m.maxActiveRuns, at('maxActiveRuns'), UNLIMITED_OR_AT_LEAST_1) ?? 1,
  maxActiveSteps:
    readInt(ctx, m.maxActiveSteps, at('maxActiveSteps'), UNLIMITED_OR_AT_LEAST_1) ?? 1,
  timeoutSec: readInt(ctx, m.timeoutSec, at('timeoutSec'), pos(0)) ?? 0,
  delaySec: readInt(ctx, m.delaySec, at('delaySec'), pos(0)) ?? 0,
  maxCleanUpTimeSec: readInt(ctx, m.maxCleanUpTimeSec, at('maxCleanUpTimeSec'), pos(0)) ?? 5,
});

/** The values of the (already key-checked) `runConfig` mapping. */
const readRunConfig = (ctx: Ctx, rc: Record<string, unknown>): Dag['runConfig'] => ({
  disableParamEdit: readBool(ctx, rc.disableParamEdit, ['runConfig', 'disableParamEdit']) ?? false,
  disableRunIdEdit: readBool(ctx, rc.disableRunIdEdit, ['runConfig', 'disableRunIdEdit']) ?? false,
});

/** The values of the (already key-checked) `mailOn` mapping. */
const readMailOn = (ctx: Ctx, mailOn: Record<string, unknown>): Dag['mailOn'] => ({
  success: readBool(ctx, mailOn.success, ['mailOn', 'success']) ?? false,
  failure: readBool(ctx, mailOn.failure, ['mailOn', 'failure']) ?? false,
});
