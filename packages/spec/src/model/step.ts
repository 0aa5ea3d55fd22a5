/** A `KEY=value` pair in definition order (env, params). Values are unexpanded text. */
export interface EnvEntry {
  readonly key: string;
  readonly value: string;
}

/** A precondition: run `condition`; with `expected`, compare its output (`re:` = regex). */
export interface Condition {
  readonly condition: string;
  /** Expected output; `re:<regex>` matches any line; absent = the exit code decides. */
  readonly expected?: string;
  /** Message to show when the condition is not met (the spec's `error` entry key). */
  readonly error?: string;
}

/** `continueOn`: when a failed or skipped step lets its dependents run. All default off. */
export interface ContinueOn {
  readonly failure: boolean;
  readonly skipped: boolean;
  readonly exitCode: readonly number[];
  /** Patterns matched against stdout lines: literal substring, or `re:<regex>`. */
  readonly output: readonly string[];
  readonly markSuccess: boolean;
}

/** A number fixed in the definition, or text expanded at run time (`${RETRIES}`). */
export type IntOrExpr = number | string;

/** `retryPolicy`. Wait before retry k = intervalSec * backoff^(k-1), capped by maxIntervalSec. */
export interface RetryPolicy {
  /** Retries after the first attempt. @default 0 */
  readonly limit: IntOrExpr;
  /** @default 0 (seconds) */
  readonly intervalSec: IntOrExpr;
  /** Multiplier; `true` in YAML is 2.0; 1 means no backoff. @default 1 */
  readonly backoff: number;
  /** Cap on the wait in seconds; 0 = no cap. @default 0 */
  readonly maxIntervalSec: number;
  /** Exit codes that qualify for a retry; empty = any non-zero code. */
  readonly exitCode: readonly number[];
}

/** `repeatPolicy`, compiled: `mode` is inferred when `repeat` is absent (as the peer does). */
export interface RepeatPolicy {
  readonly mode: 'while' | 'until';
  readonly condition?: string;
  readonly expected?: string;
  readonly exitCode: readonly number[];
  /** Total executions; 0 = no limit. @default 0 */
  readonly limit: number;
  /** @default 0 (seconds) */
  readonly intervalSec: number;
  /** @default 1 (no backoff) */
  readonly backoff: number;
  /** 0 = no cap. @default 0 */
  readonly maxIntervalSec: number;
}

/** `parallel`: static items, or a variable resolved at run time; each item is `ITEM`. */
export interface ParallelSpec {
  /** Static items as strings (maps become JSON with sorted keys). */
  readonly items: readonly string[];
  /** A variable reference such as `${ITEMS}`, split at run time. */
  readonly variable?: string;
  /** Children running at once; 0 = no limit (spec: "no limit"). @default 0 */
  readonly maxConcurrent: number;
}

/** Executor types of the spec's "Executors" table. */
export const EXECUTOR_TYPES = ['shell', 'docker', 'ssh', 'http', 'mail', 'jq', 'dag'] as const;
export type ExecutorType = (typeof EXECUTOR_TYPES)[number];

/** The step's executor: a type and its validated config (keys as the spec names them). */
export interface ExecutorSpec {
  readonly type: ExecutorType;
  readonly config: Readonly<Record<string, unknown>>;
}

/**
 * The normalised step: every field the spec's "Step fields" table names, defaults applied,
 * lenient forms compiled into one strict shape (docs/architecture.md, "House style": `normalize*` = lenient -> strict).
 */
export interface Step {
  readonly name: string;
  readonly id?: string;
  readonly description: string;
  /** The program of a one-line command (`echo` of `echo hi`); absent for scripts. */
  readonly command?: string;
  /** Arguments of a one-line command, split shell-like. */
  readonly args: readonly string[];
  /** The one-line command as written (the shell receives this). */
  readonly cmdWithArgs?: string;
  /** Inline script: `script`, or a multi-line `command`. Honours a shebang line. */
  readonly script?: string;
  /** Shell name or path, possibly with arguments (`bash -o pipefail`). */
  readonly shell?: string;
  /** Working directory as written (`dir` or `workingDir`); empty = the DAG's workingDir. */
  readonly dir: string;
  readonly stdout?: string;
  readonly stderr?: string;
  /** Variable name capturing stdout (a leading `$` is removed). */
  readonly output?: string;
  readonly env: readonly EnvEntry[];
  /** Names of the steps this one waits for (ids already rewritten to names; chain edges added). */
  readonly depends: readonly string[];
  /** Child DAG (`run` or `call`, or `command` of the `dag` executor). */
  readonly run?: string;
  /** Parameters passed to the child DAG, as `KEY=value` text. */
  readonly params?: string;
  readonly parallel?: ParallelSpec;
  readonly preconditions: readonly Condition[];
  readonly continueOn: ContinueOn;
  readonly retryPolicy?: RetryPolicy;
  readonly repeatPolicy?: RepeatPolicy;
  /** @default false */
  readonly mailOnError: boolean;
  /** Signal sent on stop. @default 'SIGTERM' */
  readonly signalOnStop: string;
  readonly executor: ExecutorSpec;
  /** Labels a worker must carry to run this step's child DAG run. */
  readonly workerSelector: Readonly<Record<string, string>>;
}
