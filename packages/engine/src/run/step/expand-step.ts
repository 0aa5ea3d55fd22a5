import { resolve } from 'node:path';
import type { Step } from '@trellis/spec';
import { expandVarsSync } from '../../vars/expand.js';
import { expandFull, type NodeScope } from './node-scope.js';
import type { RunContext } from '../run-context.js';

/** Expands every string inside a JSON-like value. */
const expandDeep = async (v: unknown, f: (s: string) => Promise<string>): Promise<unknown> => {
  if (typeof v === 'string') return f(v);
  if (Array.isArray(v)) return Promise.all(v.map((x) => expandDeep(x, f)));
  if (typeof v === 'object' && v !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = await expandDeep(x, f);
    return out;
  }
  return v;
};

/**
 * The step with its command, script, paths and executor config expanded for this execution:
 * command text sees the step's variables only, paths and config every variable.
 */
export const expandStep = async (ctx: RunContext, step: Step, scope: NodeScope): Promise<Step> => {
  const cmd = (t: string): string => expandVarsSync(t, scope.commandScopes);
  const full = (t: string): Promise<string> => expandFull(ctx, scope, t);
  const config = await expandDeep(step.executor.config, full);
  return {
    ...step,
    ...(step.command !== undefined ? { command: cmd(step.command) } : {}),
    args: step.args.map(cmd),
    ...(step.cmdWithArgs !== undefined ? { cmdWithArgs: cmd(step.cmdWithArgs) } : {}),
    ...(step.script !== undefined ? { script: cmd(step.script) } : {}),
    ...(step.stdout !== undefined ? { stdout: resolve(scope.cwd, await full(step.stdout)) } : {}),
    ...(step.stderr !== undefined ? { stderr: resolve(scope.cwd, await full(step.stderr)) } : {}),
    executor: { type: step.executor.type, config: config as Record<string, unknown> },
  };
};
