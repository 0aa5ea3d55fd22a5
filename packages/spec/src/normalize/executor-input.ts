import type { YamlPath } from '../yaml/problem.js';
import type { ExecutorType } from '../model/step.js';

/** What an executor config check needs from its step. */
export interface ExecutorCheckInput {
  readonly type: ExecutorType;
  readonly rawConfig: Record<string, unknown>;
  readonly configPath: YamlPath;
  /** The step's one-line command, script and child DAG, for executors that need them. */
  readonly cmdWithArgs: string | undefined;
  readonly script: string | undefined;
  readonly hasDagContainer: boolean;
}
