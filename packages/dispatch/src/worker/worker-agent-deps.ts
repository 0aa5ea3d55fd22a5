import type { Redis } from 'ioredis';
import type { Clock } from '@trellis/core';
import type { CoordinatorClient, Labels } from '@trellis/coordinator/client';
import type { CommandRunner, EngineEvents, ExecutorRegistry, RunHook } from '@trellis/engine';

/** Everything a worker process needs, injected once (the CLI wires it). */
export interface WorkerAgentDeps {
  /** Shown in `GET /workers` and recorded as the runs' `owner.workerId`. */
  readonly id: string;
  readonly labels: Labels;
  /** Runs executed at once (top-level; child runs execute inside their parent's slot). */
  readonly concurrency: number;
  readonly client: CoordinatorClient;
  readonly redis: Redis;
  readonly clock: Clock;
  readonly executors: ExecutorRegistry;
  /** Run-level hooks (DAG-level container, mail notifications), as in a local run. */
  readonly runHooks?: readonly RunHook[];
  readonly commands: CommandRunner;
  readonly systemEnv: Readonly<Record<string, string>>;
  readonly defaultShell: string;
  readonly events?: EngineEvents;
  /** This process, as recorded in the runs' owner. */
  readonly owner: { readonly pid: number; readonly host: string; readonly processStart: string };
  /** One line per notable event (joined, run started, coordinator lost and back). */
  readonly log: (line: string) => void;
  /**
   * Directory of the outbox journal (status reports and logs not yet delivered), under the
   * worker's home; replayed when a worker starts on it again. One worker process at a time.
   */
  readonly outboxDir: string;
  /** Bytes the outbox holds at most before step output waits. @default 64 MiB */
  readonly outboxMaxBytes?: number;
  /** Redis key prefix. @default `trellis` */
  readonly prefix?: string;
  /** The Trellis version, told in heartbeats. @default '' */
  readonly version?: string;
  /** @default 1000 (issue 6: heartbeats every second) */
  readonly heartbeatEveryMs?: number;
}
