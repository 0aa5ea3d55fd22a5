/**
 * Variables of a run (spec: Variables): expansion of `${NAME}`, JSON paths and backticks; the
 * system environment steps receive; `.env` files; start-time params; parallel items; output
 * values; condition matching. Pure functions: side effects (running backtick commands, reading
 * files, the system environment) are passed in by the caller.
 */
export { expandVarsSync, lookupVar, type ExpandOptions, type VarScope } from './expand.js';
export { expandVars } from './expand-commands.js';
export { jsonValueText, parseJsonPath, readJsonPath, type JsonPathSegment } from './json-path.js';
export {
  SYSTEM_ENV_NAMES,
  SYSTEM_ENV_PREFIXES,
  filterSystemEnv,
  isPassedSystemEnvName,
  parseDotenv,
  type DotenvEntry,
  type ParsedDotenv,
} from './env.js';
export { applyParamOverrides, paramsToJsonText, parseParamsInput } from './params.js';
export { PARALLEL_ITEM_DELIMITERS, splitParallelItems } from './items.js';
export { childOutputJson, trimOutput } from './output.js';
export { REGEX_PREFIX, matchExpected, matchesOutputPattern } from './condition.js';
