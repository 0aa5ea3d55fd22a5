import type { Condition, EnvEntry, Step } from './step.js';

/** One `schedule` expression, split into its time zone prefix and the cron part. */
export interface ScheduleEntry {
  /** As written, including any `CRON_TZ=` / `TZ=` prefix. */
  readonly expression: string;
  readonly cron: string;
  /** IANA zone from the prefix; absent = the server's zone. */
  readonly timezone?: string;
}

/** The DAG's `schedule`: when runs start, and when running ones are stopped or restarted. */
export interface Schedules {
  readonly start: readonly ScheduleEntry[];
  readonly stop: readonly ScheduleEntry[];
  readonly restart: readonly ScheduleEntry[];
}

/** A DAG parameter. Positional ones are named `1`, `2`, ... in order. */
export interface Param {
  readonly name: string;
  readonly value: string;
  readonly positional: boolean;
}

/** Docker container settings of the DAG-level `container` (spec: "Container (DAG level)"). */
export interface ContainerSpec {
  readonly image: string;
  /** @default 'missing' */
  readonly pullPolicy: 'always' | 'missing' | 'never';
  readonly env: readonly EnvEntry[];
  /** `host:container[:mode]`; relative host paths resolve against the DAG's workingDir. */
  readonly volumes: readonly string[];
  readonly workingDir?: string;
  readonly platform?: string;
  readonly user?: string;
  readonly ports: readonly string[];
  readonly network?: string;
  /** How the container is kept alive. @default 'keepalive' */
  readonly startup: 'keepalive' | 'entrypoint' | 'command';
  /** Used when `startup` is `command`. */
  readonly command: readonly string[];
  /** @default 'running' */
  readonly waitFor: 'running' | 'healthy';
  readonly logPattern?: string;
  /** @default 'no' */
  readonly restartPolicy: 'no' | 'always' | 'unless-stopped';
  /** @default false */
  readonly keepContainer: boolean;
}

/** SSH settings (spec: "SSH settings"); the same shape as the ssh executor's config. */
export interface SshSpec {
  readonly user: string;
  readonly host: string;
  /** @default '22' */
  readonly port: string;
  /** Private key path; absent = try ~/.ssh/id_rsa, id_ecdsa, id_ed25519, id_dsa in order. */
  readonly key?: string;
  readonly password?: string;
  /** @default true */
  readonly strictHostKey: boolean;
  /** @default '~/.ssh/known_hosts' */
  readonly knownHostFile: string;
}

/** OpenTelemetry trace export of the DAG's runs (spec: `otel`). */
export interface OtelSpec {
  /** @default false */
  readonly enabled: boolean;
  readonly endpoint?: string;
  readonly headers: Readonly<Record<string, string>>;
  /** @default false */
  readonly insecure: boolean;
  /** Export timeout in seconds. @default 10 */
  readonly timeoutSec: number;
  readonly resource: Readonly<Record<string, string>>;
}

/** One mail setting (`errorMail`, `infoMail`): sender, recipients, subject prefix. */
export interface MailSpec {
  readonly from: string;
  readonly to: readonly string[];
  readonly prefix: string;
  /** @default false */
  readonly attachLogs: boolean;
}

/** The SMTP server that sends the DAG's mails (spec: `smtp`). */
export interface SmtpSpec {
  readonly host: string;
  readonly port: string;
  readonly username?: string;
  readonly password?: string;
}

/** Credentials for one container registry of `registryAuths`, keyed by registry host. */
export interface RegistryAuth {
  readonly username?: string;
  readonly password?: string;
  /** base64 `username:password`, as Docker's config.json stores it. */
  readonly auth?: string;
}

/** Handler kinds of `handlerOn` and the node names they get in run details. */
export const HANDLER_KINDS = ['success', 'failure', 'cancel', 'exit'] as const;
/** One of {@link HANDLER_KINDS}. */
export type HandlerKind = (typeof HANDLER_KINDS)[number];
/** The node name of each handler in run details (spec: Events). */
export const handlerNodeName: Readonly<Record<HandlerKind, string>> = {
  success: 'onSuccess',
  failure: 'onFailure',
  cancel: 'onCancel',
  exit: 'onExit',
};

/**
 * A normalised DAG: every root field of the spec's "Workflow definition" with its default.
 * Durations keep the spec's names and units (`timeoutSec`).
 */
export interface Dag {
  readonly name: string;
  /** Path of the file it came from; absent for an inline spec. */
  readonly location?: string;
  readonly description: string;
  readonly group: string;
  readonly tags: readonly string[];
  /** @default 'chain' */
  readonly type: 'chain' | 'graph';
  readonly schedule: Schedules;
  /** @default false */
  readonly skipIfSuccessful: boolean;
  /** @default 0 */
  readonly restartWaitSec: number;
  /** Concurrent runs; -1 = unlimited. @default 1 */
  readonly maxActiveRuns: number;
  /** Steps running at once in one run; -1 = unlimited. @default 1 */
  readonly maxActiveSteps: number;
  /** 0 = no timeout. @default 0 */
  readonly timeoutSec: number;
  /** Wait before the run starts, in seconds. @default 0 */
  readonly delaySec: number;
  /** @default 5 */
  readonly maxCleanUpTimeSec: number;
  readonly preconditions: readonly Condition[];
  readonly runConfig: { readonly disableParamEdit: boolean; readonly disableRunIdEdit: boolean };
  readonly params: readonly Param[];
  readonly env: readonly EnvEntry[];
  /** Env files relative to workingDir; `[]` disables loading. @default ['.env'] */
  readonly dotenv: readonly string[];
  /** As written, or the directory of the DAG file (the process cwd for an inline spec). */
  readonly workingDir: string;
  readonly logDir?: string;
  /** @default 30 */
  readonly histRetentionDays: number;
  /** Bytes of captured output per step. @default 1048576 */
  readonly maxOutputSize: number;
  readonly container?: ContainerSpec;
  readonly ssh?: SshSpec;
  readonly queue?: string;
  readonly otel?: OtelSpec;
  readonly mailOn: { readonly success: boolean; readonly failure: boolean };
  readonly errorMail?: MailSpec;
  readonly infoMail?: MailSpec;
  readonly smtp?: SmtpSpec;
  readonly handlerOn: Readonly<Partial<Record<HandlerKind, Step>>>;
  readonly workerSelector: Readonly<Record<string, string>>;
  readonly registryAuths: Readonly<Record<string, RegistryAuth>>;
  readonly steps: readonly Step[];
}
