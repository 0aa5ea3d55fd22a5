import type { YamlPath } from '../yaml/problem.js';
import type { SshSpec } from '../model/dag.js';
import type { ExecutorSpec, ParallelSpec, Step } from '../model/step.js';
import { splitCommandLine } from './command.js';
import { readConditions } from './conditions.js';
import {
  ENV_NAME,
  checkKeys,
  isRecord,
  readBool,
  readInt,
  readString,
  readStringList,
  readStringMap,
  show,
  type Ctx,
} from './context.js';
import { readEnvEntries } from './env.js';
import { normalizeExecutorConfig, readExecutorRef } from './executor.js';
import { readParallel } from './parallel.js';
import { readParams, toDefaultParamsString } from './params.js';
import { NO_CONTINUE, readContinueOn, readRepeatPolicy, readRetryPolicy } from './policies.js';
import { normalizeSignal } from './signals.js';

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

/** Step ids must look like identifiers and must not shadow these variable names. */
const ID_PATTERN = /^[a-zA-Z][a-zA-Z0-9_-]*$/;
/** Node names of lifecycle handlers: their log files and run-detail keys use these names. */
const HANDLER_NAMES = ['onSuccess', 'onFailure', 'onCancel', 'onExit'];
const RESERVED_IDS = ['env', 'params', 'args', 'stdout', 'stderr', 'output', 'outputs'];

/** DAG-level settings a step inherits. */
export interface StepDefaults {
  readonly hasContainer: boolean;
  readonly ssh?: SshSpec;
  /** Why a `run:` target cannot be found, or undefined when it can (or is not checked). */
  readonly checkRunTarget?: (target: string) => string | undefined;
}

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

/** Compiles `command` (string, multi-line string, or list) into program, args and script. */
const readCommand = (
  ctx: Ctx,
  v: unknown,
  path: YamlPath,
): { command?: string; args: string[]; cmdWithArgs?: string; script?: string } => {
  if (v === undefined || v === null) return { args: [] };
  if (isRecord(v)) {
    ctx.report(path, `must be text or a list of text, got ${show(v)}`);
    return { args: [] };
  }
  if (Array.isArray(v)) {
    const words = readStringList(ctx, v, path) ?? [];
    if (words.length === 0) {
      ctx.report(path, 'empty command: write the program and its arguments');
      return { args: [] };
    }
    const quoted = words.map((w) =>
      /^[\w./:=@%+,-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`,
    );
    return { command: words[0] ?? '', args: words.slice(1), cmdWithArgs: quoted.join(' ') };
  }
  const text = readString(ctx, v, path);
  if (text === undefined) return { args: [] };
  if (text.trim().includes('\n')) return { args: [], script: text };
  const line = text.trim();
  if (line === '') {
    ctx.report(path, 'empty command: write the program and its arguments');
    return { args: [] };
  }
  const words = splitCommandLine(line);
  if (!words) {
    ctx.report(
      path,
      `unclosed quote in command ${show(line)}: close the quote or escape it with a backslash`,
    );
    return { args: [], cmdWithArgs: line };
  }
  return { command: words[0] ?? '', args: words.slice(1), cmdWithArgs: line };
};

/** Step `params` for a child DAG: the string form kept as written; lists and maps compiled to it. */
const readChildParams = (ctx: Ctx, v: unknown, path: YamlPath): string | undefined => {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  return toDefaultParamsString(readParams(ctx, v, path));
};

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

  const name = readString(ctx, m.name, at('name'));
  if (name !== undefined && name.trim() === '')
    ctx.report(at('name'), 'step name is empty: remove it to get a generated name, or write one');
  if (name !== undefined && what === 'a step' && HANDLER_NAMES.includes(name.trim()))
    ctx.report(
      at('name'),
      `step name ${show(name)} is reserved for the ${name.trim()} handler: define it under handlerOn, or choose another name`,
    );
  const id = readString(ctx, m.id, at('id'));
  if (id !== undefined) {
    if (!ID_PATTERN.test(id))
      ctx.report(
        at('id'),
        `invalid step id ${show(id)}: start with a letter, then letters, digits, "_" or "-"`,
      );
    else if (RESERVED_IDS.includes(id.toLowerCase()))
      ctx.report(
        at('id'),
        `step id ${show(id)} is reserved: choose another (reserved: ${RESERVED_IDS.join(', ')})`,
      );
  }

  const cmd = readCommand(ctx, m.command, at('command'));
  const scriptField = readString(ctx, m.script, at('script'));
  if (scriptField !== undefined && cmd.script !== undefined)
    ctx.report(path, 'both script and a multi-line command are set: keep one of them');
  const script = scriptField ?? cmd.script;

  if (m.run !== undefined && m.call !== undefined)
    ctx.report(path, 'set either run or call, not both');
  const runField = readString(ctx, m.run ?? m.call, at(m.run !== undefined ? 'run' : 'call'));

  const execRef = readExecutorRef(ctx, m.executor, at('executor'));
  let type = execRef.type;
  const rawConfig = execRef.rawConfig;
  let run = runField;
  if (type === 'dag' && run === undefined) {
    // spec: `executor: dag` takes the child DAG from `command`
    run = cmd.cmdWithArgs;
    if (!run) ctx.report(path, 'dag executor needs command: the child DAG file or name');
  } else if (runField !== undefined) {
    if (execRef.explicit && type !== 'dag')
      ctx.report(
        at('executor'),
        `a step with run (a child DAG) uses the dag executor, not ${type}`,
      );
    type = 'dag';
    if (cmd.cmdWithArgs !== undefined || script !== undefined)
      ctx.report(path, 'a step with run (a child DAG) must not have command or script');
  } else if (!execRef.explicit && defaults.ssh) {
    type = 'ssh'; // spec: steps of a DAG with DAG-level SSH settings use them unless they override
  } else if (!execRef.explicit && defaults.hasContainer) {
    type = 'docker'; // each step executes inside the DAG-level container
  }
  const runPath = at(m.run !== undefined ? 'run' : m.call !== undefined ? 'call' : 'command');
  if (run !== undefined && run.trim() === '') ctx.report(runPath, 'empty child DAG name');
  else if (run !== undefined && !run.includes('$')) {
    const why = defaults.checkRunTarget?.(run.trim());
    if (why) ctx.report(runPath, why);
  }

  // A command, script or run that is written but unusable already has its own problem.
  const written = (k: string): boolean => m[k] !== undefined && m[k] !== null;
  const hasWork = ['command', 'script', 'run', 'call'].some(written);
  if ((type === 'shell' || type === 'ssh') && !hasWork)
    ctx.report(path, `${what} has nothing to run: set command, script or run`);
  if (type === 'docker' && defaults.hasContainer && !hasWork)
    ctx.report(path, `${what} runs in the DAG-level container and needs command or script`);

  // spec: a step-level ssh config replaces the DAG-level one completely; without one, inherit it
  const implicitSsh =
    type === 'ssh' && defaults.ssh !== undefined && Object.keys(rawConfig).length === 0;
  const executor: ExecutorSpec = {
    type,
    config: implicitSsh
      ? { ...defaults.ssh }
      : normalizeExecutorConfig(ctx, path, {
          type,
          rawConfig,
          configPath:
            m.executor !== undefined && type === execRef.type
              ? [...path, 'executor', 'config']
              : path,
          cmdWithArgs: cmd.cmdWithArgs,
          script,
          hasDagContainer: defaults.hasContainer,
        }),
  };

  if (m.dir !== undefined && m.workingDir !== undefined)
    ctx.report(path, 'set either dir or workingDir, not both');
  const dir =
    readString(ctx, m.workingDir ?? m.dir, at(m.workingDir !== undefined ? 'workingDir' : 'dir')) ??
    '';

  let output = readString(ctx, m.output, at('output'));
  if (output !== undefined) {
    const written = output;
    output = output.replace(/^\$/, '');
    if (!ENV_NAME.test(output))
      ctx.report(
        at('output'),
        `invalid output variable name ${show(written)}: use letters, digits and "_"`,
      );
  }

  // spec: Step fields - `maxConcurrent` is a field of its own (default no limit). It limits
  // parallel items; without them it has no effect, which is not a problem (docs/decisions.md).
  const maxConcurrent = readInt(ctx, m.maxConcurrent, at('maxConcurrent'), { min: 1 });
  const parallel: ParallelSpec | undefined = readParallel(
    ctx,
    m.parallel,
    at('parallel'),
    maxConcurrent,
  );

  let signalOnStop = 'SIGTERM';
  const sig = readString(ctx, m.signalOnStop, at('signalOnStop'));
  if (sig !== undefined) {
    const s = normalizeSignal(sig);
    if (s) signalOnStop = s;
    else
      ctx.report(
        at('signalOnStop'),
        `unknown signal ${show(sig)}: use a name such as SIGTERM, SIGINT or SIGKILL`,
      );
  }

  let depends: string[] = [];
  let optOutOfChain = false;
  if (m.depends !== undefined && m.depends !== null) {
    depends = readStringList(ctx, m.depends, at('depends')) ?? [];
    optOutOfChain = Array.isArray(m.depends) && m.depends.length === 0;
    depends.forEach((d, i) => {
      if (d.trim() === '')
        ctx.report(
          Array.isArray(m.depends) ? [...at('depends'), i] : at('depends'),
          'empty step name in depends',
        );
    });
  }

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

  const step: Mutable<Step> = {
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
    signalOnStop,
    executor,
    workerSelector: readWorkerSelector(ctx, m.workerSelector, at('workerSelector')),
  };
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
