import type { YamlPath } from '../yaml/problem.js';
import type { ParallelSpec, Step } from '../model/step.js';
import { readConditions } from './conditions.js';
import {
  checkKeys,
  isRecord,
  readBool,
  readInt,
  readString,
  readStringMap,
  show,
  type Ctx,
} from './context.js';
import { readEnvEntries } from './env.js';
import { readParallel } from './parallel.js';
import { NO_CONTINUE, readContinueOn, readRepeatPolicy, readRetryPolicy } from './policies.js';
import type { StepDefaults } from './step-defaults.js';
import {
  readChildParams,
  readDepends,
  readOutput,
  readSignalOnStop,
  readStepDir,
  readStepId,
  readStepName,
} from './step-fields.js';
import { readStepWork, type StepWork } from './step-work.js';

export const STEP_KEYS = [
  'name',
  'id',
  'description',
  'command',
  'script',
  'run',
  'call',
  'depends',
  'dir',
  'workingDir',
  'shell',
  'stdout',
  'stderr',
  'output',
  'env',
  'params',
  'parallel',
  'maxConcurrent',
  'preconditions',
  'precondition',
  'continueOn',
  'retryPolicy',
  'repeatPolicy',
  'mailOnError',
  'signalOnStop',
  'executor',
  'workerSelector',
] as const;

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** A step before names and chain edges are settled (see graph.ts). */
export interface DraftStep {
  step: Mutable<Step>;
  readonly path: YamlPath;
  readonly explicitName: boolean;
  /** `depends: []` written explicitly: the step opts out of chain edges. */
  readonly optOutOfChain: boolean;
  /** `depends` was written as a list (problems then name the entry, `depends[1]`). */
  readonly dependsIsList: boolean;
  /** Word used in generated names: the program of the command, or the step's kind. */
  readonly nameHint: string;
}

/** The step fields read before the rest, in the order their problems are reported. */
interface StepParts {
  readonly name: string | undefined;
  readonly id: string | undefined;
  readonly work: StepWork;
  readonly dir: string;
  readonly output: string | undefined;
  readonly parallel: ParallelSpec | undefined;
  readonly signalOnStop: string;
  readonly depends: string[];
}

/**
 * Normalises one step: a plain string (its command) or a mapping of step fields. Names and chain
 * edges are settled later, when all steps are known.
 */
export const normalizeStep = (
  ctx: Ctx,
  raw: unknown,
  path: YamlPath,
  defaults: StepDefaults,
  what = 'a step',
): DraftStep | undefined => {
  const m: Record<string, unknown> | undefined =
    typeof raw === 'string' ? { command: raw } : isRecord(raw) ? raw : undefined;
  if (!m) {
    ctx.report(
      path,
      `${what} must be a command string or a mapping of step fields, got ${show(raw)}`,
    );
    return undefined;
  }
  checkKeys(ctx, m, path, STEP_KEYS, what);
  const at = (k: string): YamlPath => [...path, k];

  const name = readStepName(ctx, m.name, at('name'), what);
  const id = readStepId(ctx, m.id, at('id'));
  const work = readStepWork(ctx, m, path, defaults, what);
  const dir = readStepDir(ctx, m, path);
  const output = readOutput(ctx, m.output, at('output'));
  // spec: Step fields - `maxConcurrent` is a field of its own (default no limit). It limits
  // parallel items; without them it has no effect, which is not a problem (docs/decisions.md).
  const maxConcurrent = readInt(ctx, m.maxConcurrent, at('maxConcurrent'), { min: 1 });
  const parallel = readParallel(ctx, m.parallel, at('parallel'), maxConcurrent);
  const signalOnStop = readSignalOnStop(ctx, m.signalOnStop, at('signalOnStop'));
  const { depends, optOutOfChain } = readDepends(ctx, m.depends, at('depends'));

  const step = buildStep(ctx, m, path, {
    name,
    id,
    work,
    dir,
    output,
    parallel,
    signalOnStop,
    depends,
  });
  const { cmd, script, run, type } = work;
  if (type === 'dag') {
    delete step.command;
    step.args = [];
  }
  const nameHint =
    run !== undefined ? 'run' : (cmd.command ?? (script !== undefined ? 'script' : type));
  return {
    step,
    path,
    explicitName: name !== undefined && name.trim() !== '',
    optOutOfChain,
    dependsIsList: Array.isArray(m.depends),
    nameHint,
  };
};

/** Reads the remaining step fields and puts the step together, in the order of the Step type. */
const buildStep = (
  ctx: Ctx,
  m: Record<string, unknown>,
  path: YamlPath,
  parts: StepParts,
): Mutable<Step> => {
  const at = (k: string): YamlPath => [...path, k];
  const { name, id, dir, output, parallel, depends } = parts;
  const { cmd, script, run, type } = parts.work;
  const preconditions = [
    ...readConditions(ctx, m.preconditions, at('preconditions')),
    ...readConditions(ctx, m.precondition, at('precondition')),
  ];
  const description = readString(ctx, m.description, at('description')) ?? '';
  const shell = readString(ctx, m.shell, at('shell'));
  const stdout = readString(ctx, m.stdout, at('stdout'));
  const stderr = readString(ctx, m.stderr, at('stderr'));
  const params = readChildParams(ctx, m.params, at('params'));
  const retryPolicy = readRetryPolicy(ctx, m.retryPolicy, at('retryPolicy'));
  const repeatPolicy = readRepeatPolicy(ctx, m.repeatPolicy, at('repeatPolicy'));
  return {
    name: name ?? '',
    ...(id !== undefined ? { id } : {}),
    description,
    ...(cmd.command !== undefined ? { command: cmd.command } : {}),
    args: cmd.args,
    ...(cmd.cmdWithArgs !== undefined && type !== 'dag' ? { cmdWithArgs: cmd.cmdWithArgs } : {}),
    ...(script !== undefined ? { script } : {}),
    ...(shell !== undefined ? { shell } : {}),
    dir,
    ...(stdout !== undefined ? { stdout } : {}),
    ...(stderr !== undefined ? { stderr } : {}),
    ...(output !== undefined ? { output } : {}),
    env: readEnvEntries(ctx, m.env, at('env')),
    depends,
    ...(run !== undefined ? { run } : {}),
    ...(params !== undefined ? { params } : {}),
    ...(parallel ? { parallel } : {}),
    preconditions,
    continueOn:
      m.continueOn === undefined
        ? NO_CONTINUE
        : readContinueOn(ctx, m.continueOn, at('continueOn')),
    ...(retryPolicy ? { retryPolicy } : {}),
    ...(repeatPolicy ? { repeatPolicy } : {}),
    mailOnError: readBool(ctx, m.mailOnError, at('mailOnError')) ?? false,
    signalOnStop: parts.signalOnStop,
    executor: parts.work.executor,
    workerSelector: readWorkerSelector(ctx, m.workerSelector, at('workerSelector')),
  };
};

/** `workerSelector`: labels with text values, trimmed; matched exactly and case-sensitively. */
export const readWorkerSelector = (
  ctx: Ctx,
  v: unknown,
  path: YamlPath,
): Record<string, string> => {
  const m = readStringMap(ctx, v, path, 'workerSelector') ?? {};
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(m)) {
    if (k.trim() === '') ctx.report(path, 'empty label name in workerSelector');
    else out[k.trim()] = val.trim();
  }
  return out;
};
