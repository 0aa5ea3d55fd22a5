import type { YamlPath } from '../yaml/problem.js';
import type { ExecutorSpec, ExecutorType } from '../model/step.js';
import { splitCommandLine } from './command.js';
import { isRecord, readString, readStringList, show, type Ctx } from './context.js';
import { normalizeExecutorConfig, readExecutorRef } from './executor.js';
import type { StepDefaults } from './step-defaults.js';

/** A step's `command` compiled into program, args and script. */
interface StepCommand {
  readonly command?: string;
  readonly args: string[];
  readonly cmdWithArgs?: string;
  readonly script?: string;
}

/** What a step runs: its command, script, child DAG and executor. */
export interface StepWork {
  readonly cmd: StepCommand;
  readonly script: string | undefined;
  readonly run: string | undefined;
  readonly type: ExecutorType;
  readonly executor: ExecutorSpec;
}

/** Compiles `command` (string, multi-line string, or list) into program, args and script. */
const readCommand = (ctx: Ctx, v: unknown, path: YamlPath): StepCommand => {
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

/**
 * Reads `command`, `script`, `run`/`call` and `executor`, settles the executor type (a child DAG,
 * or the DAG-level ssh or container), checks that there is something to run, and compiles the
 * executor's config.
 */
export const readStepWork = (
  ctx: Ctx,
  m: Record<string, unknown>,
  path: YamlPath,
  defaults: StepDefaults,
  what: string,
): StepWork => {
  const at = (k: string): YamlPath => [...path, k];
  const cmd = readCommand(ctx, m.command, at('command'));
  const scriptField = readString(ctx, m.script, at('script'));
  if (scriptField !== undefined && cmd.script !== undefined)
    ctx.report(path, 'both script and a multi-line command are set: keep one of them');
  const script = scriptField ?? cmd.script;

  if (m.run !== undefined && m.call !== undefined)
    ctx.report(path, 'set either run or call, not both');
  const runField = readString(ctx, m.run ?? m.call, at(m.run !== undefined ? 'run' : 'call'));

  const execRef = readExecutorRef(ctx, m.executor, at('executor'));
  const { type, run } = settleType(ctx, path, defaults, { cmd, script, runField, execRef });
  checkRunTarget(ctx, m, path, defaults, run);
  checkHasWork(ctx, m, path, defaults, what, type);

  // spec: a step-level ssh config replaces the DAG-level one completely; without one, inherit it
  const implicitSsh =
    type === 'ssh' && defaults.ssh !== undefined && Object.keys(execRef.rawConfig).length === 0;
  const executor: ExecutorSpec = {
    type,
    config: implicitSsh
      ? { ...defaults.ssh }
      : normalizeExecutorConfig(ctx, path, {
          type,
          rawConfig: execRef.rawConfig,
          configPath:
            m.executor !== undefined && type === execRef.type
              ? [...path, 'executor', 'config']
              : path,
          cmdWithArgs: cmd.cmdWithArgs,
          script,
          hasDagContainer: defaults.hasContainer,
        }),
  };
  return { cmd, script, run, type, executor };
};

/** The executor type and child DAG of a step, from its executor, `run` and the DAG's defaults. */
const settleType = (
  ctx: Ctx,
  path: YamlPath,
  defaults: StepDefaults,
  read: {
    readonly cmd: StepCommand;
    readonly script: string | undefined;
    readonly runField: string | undefined;
    readonly execRef: { readonly type: ExecutorType; readonly explicit: boolean };
  },
): { type: ExecutorType; run: string | undefined } => {
  const { cmd, script, runField, execRef } = read;
  let type = execRef.type;
  let run = runField;
  if (type === 'dag' && run === undefined) {
    // spec: `executor: dag` takes the child DAG from `command`
    run = cmd.cmdWithArgs;
    if (!run) ctx.report(path, 'dag executor needs command: the child DAG file or name');
  } else if (runField !== undefined) {
    if (execRef.explicit && type !== 'dag')
      ctx.report(
        [...path, 'executor'],
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
  return { type, run };
};

/** Reports an empty child DAG name, or one the DAG's `checkRunTarget` cannot find. */
const checkRunTarget = (
  ctx: Ctx,
  m: Record<string, unknown>,
  path: YamlPath,
  defaults: StepDefaults,
  run: string | undefined,
): void => {
  const runPath = [
    ...path,
    m.run !== undefined ? 'run' : m.call !== undefined ? 'call' : 'command',
  ];
  if (run !== undefined && run.trim() === '') ctx.report(runPath, 'empty child DAG name');
  else if (run !== undefined && !run.includes('$')) {
    const why = defaults.checkRunTarget?.(run.trim());
    if (why) ctx.report(runPath, why);
  }
};

/** Reports a step that has nothing to run where its executor needs a command or script. */
const checkHasWork = (
  ctx: Ctx,
  m: Record<string, unknown>,
  path: YamlPath,
  defaults: StepDefaults,
  what: string,
  type: ExecutorType,
): void => {
  // A command, script or run that is written but unusable already has its own problem.
  const written = (k: string): boolean => m[k] !== undefined && m[k] !== null;
  const hasWork = ['command', 'script', 'run', 'call'].some(written);
  if ((type === 'shell' || type === 'ssh') && !hasWork)
    ctx.report(path, `${what} has nothing to run: set command, script or run`);
  if (type === 'docker' && defaults.hasContainer && !hasWork)
    ctx.report(path, `${what} runs in the DAG-level container and needs command or script`);
};
