export * from './model/dag.js';
export * from './model/step.js';
export { formatProblem, formatPath, type Problem, type YamlPath } from './yaml/problem.js';
export { parseYaml, type ParsedYaml, type YamlDocument } from './yaml/parse-yaml.js';
export {
  parseDagFile,
  type DagFile,
  type ParsedDag,
  type ParseDagOptions,
} from './load-dag-file.js';
export {
  DAG_NAME_MAX_LENGTH,
  DAG_NAME_PATTERN,
  FILE_NAME_PATTERN,
  baseNameOf,
  dagNameProblem,
  isValidDagName,
} from './normalize/dag-name.js';
export {
  tokenizeParams,
  nameParams,
  toDefaultParamsString,
  paramsToStrings,
  type ParamToken,
} from './normalize/params.js';
export { parseScheduleExpression, isValidTimeZone } from './normalize/schedule.js';
export { splitCommandLine } from './normalize/command.js';
export { compilePattern } from './normalize/pattern.js';
export { normalizeSignal } from './normalize/signals.js';
export { envToStrings } from './normalize/env.js';
export { MAX_PARALLEL_ITEMS } from './normalize/parallel.js';
export * from './api-shape/api-shape.js';
export * from './model/run.js';
export * from './model/worker-selector.js';
export { nextFireOf, nextRunOf, previousFireOf } from './schedule-next.js';
