import type { SshSpec } from '../model/dag.js';

/** DAG-level settings a step inherits. */
export interface StepDefaults {
  readonly hasContainer: boolean;
  readonly ssh?: SshSpec;
  /** Why a `run:` target cannot be found, or undefined when it can (or is not checked). */
  readonly checkRunTarget?: (target: string) => string | undefined;
}
