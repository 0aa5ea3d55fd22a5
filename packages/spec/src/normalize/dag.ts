import { dirname } from 'node:path';
import type { YamlPath } from '../yaml/problem.js';
import { HANDLER_KINDS, handlerNodeName, type Dag, type HandlerKind } from '../model/dag.js';
import type { Step } from '../model/step.js';
import { readConditions } from './conditions.js';
import {
  checkKeys,
  isRecord,
  readBool,
  readInt,
  readMap,
  readString,
  readStringList,
  show,
  type Ctx,
} from './context.js';
import { baseNameOf, dagNameProblem } from './dag-name.js';
import { readEnvEntries } from './env.js';
import { wireSteps, type StepItem } from './graph.js';
import { readParams } from './params.js';
import {
  readContainer,
  readMail,
  readOtel,
  readRegistryAuths,
  readSmtp,
  readSsh,
} from './root-objects.js';
import { readSchedule } from './schedule.js';
import { normalizeStep, readWorkerSelector, type StepDefaults } from './step.js';

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

/**
 * Normalises one YAML document into a DAG. Always returns a DAG (fields with problems fall back to
 * their defaults), so callers can show a partial definition next to its problems.
 */
export const normalizeDag = (ctx: Ctx, doc: unknown, opts: NormalizeDagOptions): Dag => {
  const root: YamlPath = [];
  const m = isRecord(doc) ? doc : {};
  if (!isRecord(doc))
    ctx.report(root, `a DAG must be a mapping of fields (name, steps, ...), got ${show(doc)}`);
  checkKeys(ctx, m, root, ROOT_KEYS, 'a DAG');
  const at = (k: string): YamlPath => [k];

  const ownName = readString(ctx, m.name, at('name'));
  let name = opts.name ?? ownName;
  if (name === undefined && opts.isMain && opts.location) name = baseNameOf(opts.location);
  // A later document of a multi-DAG file without a name is reported by parseDagFile, by number.
  if (name === undefined) {
    if (opts.isMain) ctx.report(root, 'this DAG has no name: add name: <name>');
  } else {
    const problem = dagNameProblem(name);
    const fromFileName = opts.name === undefined && ownName === undefined;
    if (problem && opts.name === undefined && ownName !== undefined)
      ctx.report(at('name'), problem);
    else if (problem)
      // A name from the file name or from the caller is not written in the file: no line.
      ctx.reportUnplaced(
        root,
        fromFileName
          ? `${problem}; it comes from the file name, so rename the file or add name: <name>`
          : problem,
      );
  }

  const type =
    m.type === undefined ? 'chain' : m.type === 'chain' || m.type === 'graph' ? m.type : undefined;
  if (type === undefined) ctx.report(at('type'), `must be "chain" or "graph", got ${show(m.type)}`);

  let tags = readStringList(ctx, m.tags, at('tags')) ?? [];
  if (typeof m.tags === 'string') tags = m.tags.split(',');
  tags = tags.map((t) => t.trim()).filter((t) => t !== '');

  const container = readContainer(ctx, m.container, at('container'));
  const ssh = readSsh(ctx, m.ssh, at('ssh'), 'ssh');
  // The parsed values: `ssh: null` or `container: null` sets nothing, so it cannot conflict.
  if (container !== undefined && ssh !== undefined)
    ctx.report(
      at('ssh'),
      'ssh and container cannot both be set at DAG level: keep one, and set the other per step',
    );

  let dotenv = ['.env'];
  if (m.dotenv !== undefined && m.dotenv !== null)
    dotenv = readStringList(ctx, m.dotenv, at('dotenv')) ?? [];

  const rc = readMap(ctx, m.runConfig, at('runConfig'), 'runConfig') ?? {};
  checkKeys(ctx, rc, at('runConfig'), ['disableParamEdit', 'disableRunIdEdit'], 'runConfig');
  const mailOn = readMap(ctx, m.mailOn, at('mailOn'), 'mailOn') ?? {};
  checkKeys(ctx, mailOn, at('mailOn'), ['success', 'failure'], 'mailOn');

  const checkRunTarget = (target: string): string | undefined => {
    if (name !== undefined && target === name)
      return `runs its own DAG ${show(target)}, which would never end`;
    if (opts.localDagNames?.has(target) || !opts.dagExists || opts.dagExists(target))
      return undefined;
    return `child DAG ${show(target)} is neither in this file nor in the DAGs folder: check the name, or create it`;
  };
  const defaults: StepDefaults = {
    hasContainer: container !== undefined,
    ...(ssh ? { ssh } : {}),
    checkRunTarget,
  };
  // A document that is not a mapping has one problem; "no steps" would only repeat it.
  const steps = isRecord(doc) ? readSteps(ctx, m.steps, type ?? 'chain', defaults) : [];
  const handlerOn = readHandlers(ctx, m.handlerOn, defaults);

  const workingDir =
    readString(ctx, m.workingDir, at('workingDir')) ??
    (opts.location ? dirname(opts.location) : opts.cwd);
  const logDir = readString(ctx, m.logDir, at('logDir'));
  const queue = readString(ctx, m.queue, at('queue'));
  if (queue !== undefined && queue.trim() === '')
    ctx.report(at('queue'), 'queue name is empty: remove it or name a queue');
  const otel = readOtel(ctx, m.otel, at('otel'));
  const errorMail = readMail(ctx, m.errorMail, at('errorMail'), 'errorMail');
  const infoMail = readMail(ctx, m.infoMail, at('infoMail'), 'infoMail');
  const smtp = readSmtp(ctx, m.smtp, at('smtp'));

  return {
    name: name ?? '',
    ...(opts.location ? { location: opts.location } : {}),
    description: readString(ctx, m.description, at('description')) ?? '',
    group: readString(ctx, m.group, at('group')) ?? '',
    tags,
    type: type ?? 'chain',
    schedule: readSchedule(ctx, m.schedule, at('schedule')),
    skipIfSuccessful: readBool(ctx, m.skipIfSuccessful, at('skipIfSuccessful')) ?? false,
    restartWaitSec: readInt(ctx, m.restartWaitSec, at('restartWaitSec'), pos(0)) ?? 0,
    maxActiveRuns:
      readInt(ctx, m.maxActiveRuns, at('maxActiveRuns'), {
        min: 1,
        special: -1,
        hint: '-1 (unlimited) or an integer of at least 1',
      }) ?? 1,
    maxActiveSteps:
      readInt(ctx, m.maxActiveSteps, at('maxActiveSteps'), {
        min: 1,
        special: -1,
        hint: '-1 (unlimited) or an integer of at least 1',
      }) ?? 1,
    timeoutSec: readInt(ctx, m.timeoutSec, at('timeoutSec'), pos(0)) ?? 0,
    delaySec: readInt(ctx, m.delaySec, at('delaySec'), pos(0)) ?? 0,
    maxCleanUpTimeSec: readInt(ctx, m.maxCleanUpTimeSec, at('maxCleanUpTimeSec'), pos(0)) ?? 5,
    preconditions: [
      ...readConditions(ctx, m.preconditions, at('preconditions')),
      ...readConditions(ctx, m.precondition, at('precondition')),
    ],
    runConfig: {
      disableParamEdit:
        readBool(ctx, rc.disableParamEdit, ['runConfig', 'disableParamEdit']) ?? false,
      disableRunIdEdit:
        readBool(ctx, rc.disableRunIdEdit, ['runConfig', 'disableRunIdEdit']) ?? false,
    },
    params: readParams(ctx, m.params, at('params')),
    env: readEnvEntries(ctx, m.env, at('env')),
    dotenv,
    workingDir,
    ...(logDir !== undefined ? { logDir } : {}),
    histRetentionDays: readInt(ctx, m.histRetentionDays, at('histRetentionDays'), pos(1)) ?? 30,
    maxOutputSize: readInt(ctx, m.maxOutputSize, at('maxOutputSize'), pos(1)) ?? 1_048_576,
    ...(container ? { container } : {}),
    ...(ssh ? { ssh } : {}),
    ...(queue !== undefined && queue.trim() !== '' ? { queue: queue.trim() } : {}),
    ...(otel ? { otel } : {}),
    mailOn: {
      success: readBool(ctx, mailOn.success, ['mailOn', 'success']) ?? false,
      failure: readBool(ctx, mailOn.failure, ['mailOn', 'failure']) ?? false,
    },
    ...(errorMail ? { errorMail } : {}),
    ...(infoMail ? { infoMail } : {}),
    ...(smtp ? { smtp } : {}),
    handlerOn,
    workerSelector: readWorkerSelector(ctx, m.workerSelector, at('workerSelector')),
    registryAuths: readRegistryAuths(ctx, m.registryAuths, at('registryAuths')),
    steps,
  };
};

/** `steps`: a list (strings, mappings, nested lists = parallel groups) or a name -> step mapping. */
const readSteps = (
  ctx: Ctx,
  v: unknown,
  type: 'chain' | 'graph',
  defaults: StepDefaults,
): Step[] => {
  const path: YamlPath = ['steps'];
  if (v === undefined || v === null) {
    ctx.report([], 'this DAG has no steps: add steps: with at least one step');
    return [];
  }
  const items: StepItem[] = [];
  if (isRecord(v)) {
    // A mapping of name -> step (a peer form); order is the order written.
    for (const [key, raw] of Object.entries(v)) {
      // The key is the step's name, also for the plain-string form (`build: make all`).
      const step = isRecord(raw)
        ? { name: key, ...raw }
        : typeof raw === 'string'
          ? { name: key, command: raw }
          : raw;
      const d = normalizeStep(ctx, step, [...path, key], defaults);
      if (d) items.push({ kind: 'step', draft: d });
    }
  } else if (Array.isArray(v)) {
    v.forEach((raw, i) => {
      if (Array.isArray(raw)) {
        if (raw.length === 0)
          ctx.report([...path, i], 'empty parallel group: list at least one step in it');
        const drafts = raw.flatMap((member, j) => {
          if (Array.isArray(member)) {
            ctx.report(
              [...path, i, j],
              'parallel groups cannot be nested: list the steps directly in the group',
            );
            return [];
          }
          const d = normalizeStep(ctx, member, [...path, i, j], defaults);
          return d ? [d] : [];
        });
        if (drafts.length > 0) items.push({ kind: 'group', drafts });
      } else {
        const d = normalizeStep(ctx, raw, [...path, i], defaults);
        if (d) items.push({ kind: 'step', draft: d });
      }
    });
  } else {
    ctx.report(path, `must be a list of steps, got ${show(v)}`);
    return [];
  }
  if (items.length === 0 && (Array.isArray(v) ? v.length === 0 : true))
    ctx.report(path, 'this DAG has no steps: add at least one step');
  return wireSteps(ctx, items, type);
};

/** `handlerOn`: `success`, `failure`, `cancel`, `exit`, each step-like; names are fixed. */
const readHandlers = (
  ctx: Ctx,
  v: unknown,
  defaults: StepDefaults,
): Partial<Record<HandlerKind, Step>> => {
  const path: YamlPath = ['handlerOn'];
  const m = readMap(ctx, v, path, 'handlerOn');
  if (!m) return {};
  checkKeys(ctx, m, path, HANDLER_KINDS, 'handlerOn');
  const out: Partial<Record<HandlerKind, Step>> = {};
  for (const kind of HANDLER_KINDS) {
    const raw = m[kind];
    if (raw === undefined || raw === null) continue;
    const d = normalizeStep(ctx, raw, [...path, kind], defaults, `the ${kind} handler`);
    if (!d) continue;
    if (d.step.depends.length > 0)
      ctx.report(
        [...path, kind, 'depends'],
        'handlers run after all steps and cannot have depends',
      );
    if (d.step.parallel)
      ctx.report([...path, kind, 'parallel'], 'handlers cannot have parallel items');
    // spec: Events - run details name handler nodes onSuccess/onFailure/onCancel/onExit, so a
    // `name:` written in handlerOn is ignored (docs/decisions.md).
    d.step.name = handlerNodeName[kind];
    d.step.depends = [];
    out[kind] = d.step;
  }
  return out;
};
