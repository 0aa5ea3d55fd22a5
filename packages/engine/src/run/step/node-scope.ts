import { isAbsolute, resolve } from 'node:path';
import { expandHome, homeOf } from '@trellis/core';
import { HANDLER_KINDS, handlerNodeName, type NodeRecord } from '@trellis/spec';
import type { ConditionEnv } from '../../conditions/evaluate-conditions.js';
import type { StepLogs } from '../../ports/recorder.js';
import { expandVarsSync } from '../../vars/expand.js';
import { expandVars } from '../../vars/expand-commands.js';
import { expandForProgram, shellProgram } from '../../vars/shell-text.js';
import type { RunContext } from '../run-context.js';
import { backtickOptions, baseProcessEnv } from '../run-env.js';

export type Scope = Readonly<Record<string, string>>;

/** Variables and environment of one node execution. */
export interface NodeScope {
  readonly cwd: string;
  /** For command and script text: step vars, step env, params, ancestor outputs. */
  readonly commandScopes: readonly Scope[];
  /** Everything, including DAG env and the whole system environment (parse time). */
  readonly fullScopes: readonly Scope[];
  /** The environment the step's process receives. */
  readonly env: Readonly<Record<string, string>>;
}

/** The scope with `vars` in front of both variable lists (not in the process environment). */
export const withVars = (scope: NodeScope, vars: Scope): NodeScope => ({
  ...scope,
  fullScopes: [vars, ...scope.fullScopes],
  commandScopes: [vars, ...scope.commandScopes],
});

/** The scope of one parallel item: `ITEM` is a variable and in the process environment. */
export const withItem = (scope: NodeScope, item: string): NodeScope => ({
  ...scope,
  commandScopes: [{ ITEM: item }, ...scope.commandScopes],
  fullScopes: [{ ITEM: item }, ...scope.fullScopes],
  env: { ...scope.env, ITEM: item },
});

/** Expands text with every variable of the scope, backtick commands included. */
export const expandFull = (ctx: RunContext, scope: NodeScope, text: string): Promise<string> =>
  expandVars(text, scope.fullScopes, backtickOptions(ctx));

/** The outputs a node sees: its ancestors', nearest first (a handler sees every step's). */
const outputsFor = (ctx: RunContext, n: NodeRecord, isHandler: boolean): Record<string, string> => {
  const out: Record<string, string> = {};
  // Most runs have no outputs at all: no ancestors to walk then.
  if (!ctx.record.nodes.some((x) => hasKeys(x.outputs))) return out;
  const names = isHandler ? ctx.record.nodes.map((x) => x.step.name) : ctx.ancestorsOf(n.step.name);
  for (const name of names) {
    const o = ctx.byName.get(name)?.outputs ?? {};
    for (const [k, v] of Object.entries(o)) if (!(k in out)) out[k] = v;
  }
  return out;
};

const hasKeys = (o: object | undefined): boolean => {
  for (const _ in o) return true;
  return false;
};

/**
 * The node's working directory: its `dir`, relative to the DAG's working directory; a leading `~`
 * (written, or from a variable's value) is `home`.
 */
const nodeCwd = (ctx: RunContext, n: NodeRecord, home: string): string => {
  const { params, dagEnv, workingDir } = ctx.vars;
  const raw = n.step.dir ? expandVarsSync(n.step.dir, [params, dagEnv, ctx.deps.systemEnv]) : '';
  const dir = expandHome(raw, home);
  return dir ? (isAbsolute(dir) ? dir : resolve(workingDir, dir)) : workingDir;
};

/** The variables and environment of a node, with `extra` (hook variables, DAG_RUN_STATUS). */
export const nodeScope = async (
  ctx: RunContext,
  n: NodeRecord,
  logs: StepLogs,
  extra: Scope,
): Promise<NodeScope> => {
  const { params, context, dagEnv } = ctx.vars;
  const sys = ctx.deps.systemEnv;
  const base = baseProcessEnv(ctx);
  let cwd = nodeCwd(ctx, n, homeOf(base));
  const isHandler = HANDLER_KINDS.some(
    (k) => handlerNodeName[k] === n.step.name && ctx.dag.handlerOn[k] === n.step,
  );
  const outputs = outputsFor(ctx, n, isHandler);
  const stepVars: Record<string, string> = {
    DAG_RUN_STEP_NAME: n.step.name,
    DAG_RUN_STEP_STDOUT_FILE: logs.stdoutPath,
    DAG_RUN_STEP_STDERR_FILE: logs.stderrPath,
    PWD: cwd,
    ...extra,
  };
  const stepEnv: Record<string, string> = {};
  for (const e of n.step.env) {
    stepEnv[e.key] = await expandVars(
      e.value,
      [stepEnv, stepVars, params, outputs, context, dagEnv, sys],
      backtickOptions(ctx),
    );
  }
  // A step whose own env sets HOME means that home by `~` in its dir.
  if (stepEnv.HOME !== undefined) stepVars.PWD = cwd = nodeCwd(ctx, n, homeOf(stepEnv));
  return {
    cwd,
    commandScopes: [stepVars, stepEnv, params, outputs],
    fullScopes: [stepVars, stepEnv, params, outputs, context, dagEnv, sys],
    env: { ...base, ...outputs, ...stepEnv, ...stepVars },
  };
};

/** How conditions of a node (preconditions, repeat conditions) expand text and run commands. */
export const conditionEnv = (
  ctx: RunContext,
  scope: NodeScope,
  shell: string | undefined,
): ConditionEnv => ({
  expandFull: (text) => expandFull(ctx, scope, text),
  runCommand: (command) => {
    const sh = shell ?? ctx.deps.defaultShell;
    const cmd = expandForProgram(command, scope.commandScopes, scope.env, shellProgram(sh));
    return ctx.deps.commands.run(cmd.text, {
      cwd: scope.cwd,
      env: { ...scope.env, ...cmd.env },
      shell: sh,
      abort: ctx.stop.signal,
    });
  },
});
