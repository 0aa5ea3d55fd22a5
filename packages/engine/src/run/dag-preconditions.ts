import { evaluateConditions } from '../conditions/evaluate-conditions.js';
import { expandVars } from '../vars/expand-commands.js';
import { expandForProgram, shellProgram } from '../vars/shell-text.js';
import type { RunContext } from './run-context.js';
import { backtickOptions, baseProcessEnv } from './run-env.js';

/**
 * Evaluates the DAG's preconditions (not in a dry run) and records their results; when one is
 * not met, no step runs and the run ends cancelled.
 */
export const checkDagPreconditions = async (ctx: RunContext): Promise<void> => {
  if (ctx.input.dryRun) return;
  const { params, context, dagEnv, workingDir } = ctx.vars;
  const scopes = [params, context, dagEnv, ctx.deps.systemEnv];
  const env = baseProcessEnv(ctx);
  const { met, results } = await evaluateConditions(ctx.dag.preconditions, {
    expandFull: (t) => expandVars(t, scopes, backtickOptions(ctx)),
    runCommand: (c) => {
      const shell = ctx.deps.defaultShell;
      const cmd = expandForProgram(c, [params], env, shellProgram(shell));
      return ctx.deps.commands.run(cmd.text, {
        cwd: workingDir,
        env: { ...env, ...cmd.env },
        shell,
        abort: ctx.stop.signal,
      });
    },
  });
  ctx.record.preconditions = results;
  if (!met) {
    ctx.progress.preconditionFailed = true;
    ctx.record.error = "the DAG's preconditions were not met; no step ran";
    ctx.log(ctx.record.error);
  }
  ctx.saver.persist();
};
