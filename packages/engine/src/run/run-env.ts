import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { expandHome, homeOf } from '@trellis/core';
import { filterSystemEnv, parseDotenv } from '../vars/env.js';
import { expandVarsSync, type ExpandOptions } from '../vars/expand.js';
import { expandVars } from '../vars/expand-commands.js';
import { isPosixShell, shellProgram } from '../vars/shell-text.js';
import type { RunContext } from './run-context.js';

/**
 * How values run backtick commands (`` `cmd` `` in a value): with the default shell in the DAG's
 * directory, the values of variables inside a command passed in its environment (when the
 * shell is a POSIX one); the result is the trimmed stdout.
 */
export const backtickOptions = (ctx: RunContext): ExpandOptions => ({
  backticks: async (command, env) => {
    const r = await ctx.deps.commands.run(command, {
      cwd: ctx.vars.workingDir,
      env: { ...baseProcessEnv(ctx), ...env },
      shell: ctx.deps.defaultShell,
      abort: ctx.stop.signal,
    });
    return r.stdout.trim();
  },
  posixShell: isPosixShell(shellProgram(ctx.deps.defaultShell)),
});

/**
 * The environment every step process starts from (spec, Variables: filtered system env), made
 * once per run when its variables are evaluated (not again for each step: the system
 * environment is filtered name by name).
 */
export const baseProcessEnv = (ctx: RunContext): Readonly<Record<string, string>> =>
  ctx.vars.processEnv ?? {
    ...filterSystemEnv(ctx.deps.systemEnv),
    ...ctx.vars.dagEnv,
    ...ctx.vars.context,
    ...ctx.vars.namedParams,
  };

/** DAG env (+dotenv), params and context variables, evaluated once at run start. */
export const prepareRunVars = async (ctx: RunContext): Promise<void> => {
  const { dag, vars, record } = ctx;
  const sys = ctx.deps.systemEnv;
  const fileDir = dag.location ? dirname(dag.location) : process.cwd();
  // `~` is the home of the user the run's processes start as (docs/dag-reference.md, Paths).
  const wd = expandHome(expandVarsSync(dag.workingDir, [sys]), homeOf(sys));
  vars.workingDir = isAbsolute(wd) ? wd : resolve(fileDir, wd);
  // On a worker, the DAG file's folder is the coordinator's: when it is not on this host too,
  // the steps start in the home of the user they run as (docs/decisions.md, "Worker paths").
  if (dag.location && vars.workingDir === fileDir && !existsSync(fileDir)) {
    vars.workingDir = homeOf(sys);
    ctx.log(
      `the DAG file's folder ${fileDir} is not on this host: steps start in ${vars.workingDir} (set workingDir to choose another)`,
    );
  }

  const env: Record<string, string> = { ...readDotenvFiles(ctx) };
  for (const e of dag.env) env[e.key] = await expandVars(e.value, [env, sys], backtickOptions(ctx));
  vars.dagEnv = env;

  const params: Record<string, string> = {};
  for (const p of record.params) {
    if (p.literal !== true)
      p.value = await expandVars(p.value, [params, env, sys], backtickOptions(ctx));
    params[p.name] = p.value;
  }
  vars.params = params;
  vars.namedParams = Object.fromEntries(
    record.params.filter((p) => !/^\d+$/.test(p.name)).map((p) => [p.name, p.value]),
  );
  vars.context = {
    DAG_NAME: record.name,
    DAG_RUN_ID: record.dagRunId,
    DAG_RUN_LOG_FILE: record.log,
  };
  vars.processEnv = baseProcessEnv(ctx);
};

/**
 * The DAG's dotenv files, relative to its working directory (a leading `~` is the home
 * directory); a missing `.env` is no problem.
 */
const readDotenvFiles = (ctx: RunContext): Record<string, string> => {
  const sys = ctx.deps.systemEnv;
  const dotenv: Record<string, string> = {};
  for (const file of ctx.dag.dotenv) {
    const path = resolve(ctx.vars.workingDir, expandHome(expandVarsSync(file, [sys]), homeOf(sys)));
    if (!existsSync(path)) {
      if (file !== '.env') ctx.log(`dotenv file ${path} not found; skipped`);
      continue;
    }
    const { entries, problems } = parseDotenv(readFileSync(path, 'utf8'));
    for (const p of problems) ctx.log(`dotenv ${path}: ${p}`);
    // spec: later files override earlier ones; system variables take precedence
    for (const e of entries) if (sys[e.name] === undefined) dotenv[e.name] = e.value;
  }
  return dotenv;
};
