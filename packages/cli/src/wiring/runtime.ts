import {
  loadConfig,
  systemClock,
  uuidv7Generator,
  type Clock,
  type Config,
  type ConfigFlags,
} from '@trellis/core';
import { LocalDispatcher, RunHost } from '@trellis/dispatch';
import { EngineEvents } from '@trellis/engine';
import {
  ShellCommandRunner,
  SpawnerProcessRunner,
  SwitchingProcessRunner,
  createExecutorSet,
} from '@trellis/executors';
import { join } from 'node:path';
import {
  InMemoryRunEvents,
  RecordTransitions,
  RunService,
  WorkerChildRuns,
} from '@trellis/services';
import { DagFileLoader, FsDagStore, type DagSuspendFlags } from '@trellis/store';
import { RetentionOnStart, recoverLostRuns } from '@trellis/scheduler';
import { currentOwner, isOwnerAlive, processStartTime } from '@trellis/store';
import { RunTracer } from '@trellis/telemetry';
import { definedEnv, type CliIo } from '../io.js';
import { VERSION } from '../version.js';
import type { Fleet } from './fleet.js';
import type { PgDb } from '@trellis/store-pg';
import { withLeaderSwaps } from './leader-scope.js';
import { openRuntimeStore, type RuntimeStore } from './runtime-store.js';

/** The concrete parts one CLI command works with (the composition root). */
export interface Runtime {
  readonly config: Readonly<Config>;
  readonly store: RuntimeStore;
  /** `postgres` with `SVC_DATABASE_URL`, else `files`. */
  readonly storeKind: 'files' | 'postgres';
  /** The PostgreSQL store's pool (leader lease, metrics); undefined with the file store. */
  readonly database?: PgDb;
  /** The PostgreSQL store's suspend flags (shared by the instances); undefined on files. */
  readonly suspendFlags?: DagSuspendFlags;
  /** Closes the store (the database pool) at shutdown; after the runs have settled. */
  closeStore(): Promise<void>;
  readonly dags: DagFileLoader;
  readonly runs: RunService;
  readonly events: EngineEvents;
  /**
   * Run, step, queue and worker transitions of this process (the API's long-poll and event
   * streams): every record the store writes feeds it, local and remote runs alike.
   */
  readonly runEvents: InMemoryRunEvents;
  /** Turns saved records into `runEvents`; keeps the records of runs that just ended. */
  readonly transitions: RecordTransitions;
  /** OpenTelemetry tracing of the runs of DAGs with `otel.enabled`; `shutdown()` before exit. */
  readonly tracer: RunTracer;
  /** Distributed mode's coordinator and dispatcher (with `opts.fleet` and `redis.url`). */
  readonly fleet?: Fleet;
}

/** How a command wants its runtime. */
export interface RuntimeOptions {
  /** Top-level runs continue the TRACEPARENT of this process (foreground CLI commands). */
  inheritTraceparent?: boolean;
  /** Coordinate workers when `redis.url` is set (start-all, coordinator); call `fleet.start()`. */
  fleet?: boolean;
  /**
   * Start step processes through a spawner process (`SpawnerProcessRunner`), for the
   * long-running roles whose event loop serves the API or the queues; a one-shot CLI run spawns
   * its first few processes directly (no helper process to start for a short run), the rest
   * through a spawner (`SwitchingProcessRunner`).
   */
  spawner?: boolean;
  /** The config the caller already loaded from `flags` (a server, to listen before wiring). */
  config?: Readonly<Config>;
}

/**
 * Wires config, the file store, the executors and the run service for a command, and marks runs
 * whose owner process died as failed (crash safety: every Trellis process that uses the store
 * checks at start).
 */
export const makeRuntime = async (
  io: CliIo,
  flags: ConfigFlags,
  opts: RuntimeOptions = {},
): Promise<Runtime> => {
  const config = opts.config ?? loadConfig({ env: io.env, argv: flags, cwd: io.cwd }).config;
  const tracer = new RunTracer({
    serviceVersion: VERSION,
    warn: (m) => io.err(`warning: ${m}`),
    ...(opts.inheritTraceparent && io.env.TRACEPARENT
      ? { inheritedTraceparent: io.env.TRACEPARENT }
      : {}),
  });
  const clock = systemClock;
  const warn = (m: string): void => io.err(`warning: ${m}`);
  const runEvents = new InMemoryRunEvents({ clock });
  const transitions = new RecordTransitions(runEvents);
  const opened = await openRuntimeStore(config, {
    clock,
    warn: (m) => io.err(`warning: ${m}`),
    onRecordSaved: (r) => transitions.recordSaved(r),
    userHome: io.env.HOME,
  });
  // with the PostgreSQL store, the leader's queue hand-overs are fenced (leader-scope.ts)
  const store = opened.kind === 'postgres' ? withLeaderSwaps(opened.store) : opened.store;
  const dags = new DagFileLoader(config.paths.dagsDir);
  const events = new EngineEvents();
  // gRPC and BullMQ are loaded only in distributed mode
  const fleet =
    opts.fleet && config.redis?.url !== undefined
      ? (await import('./fleet.js')).makeFleet(config, store, clock, (l) => io.err(l), runEvents, {
          logChunks: opened.logChunks,
        })
      : undefined;
  // spec: registryAuths; CONTAINER_AUTH_CONFIG (the peer's DOCKER_AUTH_CONFIG also works)
  const processes = opts.spawner ? new SpawnerProcessRunner() : new SwitchingProcessRunner();
  const executorSet = createExecutorSet({
    containerAuthConfig: io.env.CONTAINER_AUTH_CONFIG ?? io.env.DOCKER_AUTH_CONFIG,
    processes,
  });
  const owner = { owner: currentOwner(), isOwnerAlive, processStartTime };
  const host = new RunHost({
    clock,
    executors: executorSet.executors,
    commands: new ShellCommandRunner(processes),
    events,
    systemEnv: definedEnv(io.env),
    defaultShell: config.defaultShell || io.env.SHELL || 'sh',
    runHooks: [tracer, ...executorSet.runHooks, new RetentionOnStart({ store, clock })],
  });
  const local = new LocalDispatcher({ host, store, children: () => runs });
  const runs: RunService = new RunService({
    store,
    dags,
    clock,
    ids: uuidv7Generator(() => clock.now().getTime()),
    processes: owner,
    local,
    queues: config.queues,
    warn: (m) => io.err(`warning: ${m}`),
    ...(fleet ? { dispatcher: fleet.dispatcher } : {}),
  });
  // Children that parents on workers ask for take the same path as those of local parents.
  if (fleet) fleet.children = new WorkerChildRuns({ children: runs, store, clock, warn });
  await recoverAtStart(io, runs, { store, clock, processes: owner });
  return {
    config,
    store,
    storeKind: opened.kind,
    ...(opened.database ? { database: opened.database } : {}),
    ...(opened.suspendFlags ? { suspendFlags: opened.suspendFlags } : {}),
    closeStore: () => opened.close(),
    dags,
    runs,
    events,
    runEvents,
    transitions,
    tracer,
    ...(fleet ? { fleet } : {}),
  };
};

/** Marks runs whose owner process died as failed, freeing their queue slots (crash safety). */
const recoverAtStart = async (
  io: CliIo,
  runs: RunService,
  deps: Parameters<typeof recoverLostRuns>[0],
): Promise<void> => {
  const recovered = await recoverLostRuns(deps);
  runs.queues.runsEnded(recovered);
  for (const r of recovered)
    io.err(
      `note: run ${r.dagRunId} of DAG "${r.name}" was left running by a process that died; marked failed`,
    );
};

/** How old the DAG list's latest runs of another process may be (issue 21: within a second). */
const LATEST_RUN_STALE_MS = 1000;

/**
 * The DAG definitions of the runtime's DAGs folder (API reads, scheduler), with suspend flags:
 * the database's with the PostgreSQL store (every instance agrees), else files in the data folder.
 */
export const dagDefinitionsOf = (rt: Runtime, clock: Clock): FsDagStore =>
  new FsDagStore({
    dagsDir: rt.config.paths.dagsDir,
    ...(rt.suspendFlags
      ? { suspendFlags: rt.suspendFlags }
      : { suspendDir: join(rt.config.paths.dataDir, 'suspend') }),
    clock,
    // the run index in memory, not the record: listing 1,000 DAGs reads no file (docs/decisions.md)
    latestRun: (name) => rt.store.latestSummary(name, LATEST_RUN_STALE_MS),
    // long-running roles only: reads from memory, kept current by watching the folders
    watch: true,
    indexFile: join(rt.config.paths.dataDir, 'dag-index.json'),
  });

export { ensureFolders } from './folders.js';
