import type { YamlPath } from '../yaml/problem.js';
import { ENV_NAME, readString, readStringList, show, type Ctx } from './context.js';
import { readParams, toDefaultParamsString } from './params.js';
import { normalizeSignal } from './signals.js';

/** Step ids must look like identifiers and must not shadow these variable names. */
const ID_PATTERN = /^[a-zA-Z][a-zA-Z0-9_-]*$/;
/** Node names of lifecycle handlers: their log files and run-detail keys use these names. */
const HANDLER_NAMES = ['onSuccess', 'onFailure', 'onCancel', 'onExit'];
const RESERVED_IDS = ['env', 'params', 'args', 'stdout', 'stderr', 'output', 'outputs'];

/** `name`: not empty, and (for a step, not a handler) not a handler's node name. */
export const readStepName = (
  ctx: Ctx,
  v: unknown,
  path: YamlPath,
  what: string,
): string | undefined => {
  const name = readString(ctx, v, path);
  if (name !== undefined && name.trim() === '')
    ctx.report(path, 'step name is empty: remove it to get a generated name, or write one');
  if (name !== undefined && what === 'a step' && HANDLER_NAMES.includes(name.trim()))
    ctx.report(
      path,
      `step name ${show(name)} is reserved for the ${name.trim()} handler: define it under handlerOn, or choose another name`,
    );
  return name;
};

/** `id`: an identifier that does not shadow a reserved variable name. */
export const readStepId = (ctx: Ctx, v: unknown, path: YamlPath): string | undefined => {
  const id = readString(ctx, v, path);
  if (id !== undefined) {
    if (!ID_PATTERN.test(id))
      ctx.report(
        path,
        `invalid step id ${show(id)}: start with a letter, then letters, digits, "_" or "-"`,
      );
    else if (RESERVED_IDS.includes(id.toLowerCase()))
      ctx.report(
        path,
        `step id ${show(id)} is reserved: choose another (reserved: ${RESERVED_IDS.join(', ')})`,
      );
  }
  return id;
};

/** `dir` or its peer spelling `workingDir` (not both); empty = the DAG's workingDir. */
export const readStepDir = (ctx: Ctx, m: Record<string, unknown>, path: YamlPath): string => {
  if (m.dir !== undefined && m.workingDir !== undefined)
    ctx.report(path, 'set either dir or workingDir, not both');
  return (
    readString(ctx, m.workingDir ?? m.dir, [
      ...path,
      m.workingDir !== undefined ? 'workingDir' : 'dir',
    ]) ?? ''
  );
};

/** `output`: a variable name, a leading `$` removed. */
export const readOutput = (ctx: Ctx, v: unknown, path: YamlPath): string | undefined => {
  const written = readString(ctx, v, path);
  if (written === undefined) return undefined;
  const output = written.replace(/^\$/, '');
  if (!ENV_NAME.test(output))
    ctx.report(path, `invalid output variable name ${show(written)}: use letters, digits and "_"`);
  return output;
};

/** `signalOnStop`: a signal name (normalised); SIGTERM when absent or unknown. */
export const readSignalOnStop = (ctx: Ctx, v: unknown, path: YamlPath): string => {
  const sig = readString(ctx, v, path);
  if (sig === undefined) return 'SIGTERM';
  const s = normalizeSignal(sig);
  if (s) return s;
  ctx.report(path, `unknown signal ${show(sig)}: use a name such as SIGTERM, SIGINT or SIGKILL`);
  return 'SIGTERM';
};

/** `depends`: step names; `depends: []` written explicitly opts out of chain edges. */
export const readDepends = (
  ctx: Ctx,
  v: unknown,
  path: YamlPath,
): { depends: string[]; optOutOfChain: boolean } => {
  if (v === undefined || v === null) return { depends: [], optOutOfChain: false };
  const depends = readStringList(ctx, v, path) ?? [];
  depends.forEach((d, i) => {
    if (d.trim() === '')
      ctx.report(Array.isArray(v) ? [...path, i] : path, 'empty step name in depends');
  });
  return { depends, optOutOfChain: Array.isArray(v) && v.length === 0 };
};

/** Step `params` for a child DAG: the string form kept as written; lists and maps compiled to it. */
export const readChildParams = (ctx: Ctx, v: unknown, path: YamlPath): string | undefined => {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  return toDefaultParamsString(readParams(ctx, v, path));
};
