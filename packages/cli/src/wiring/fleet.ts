import type { Clock, Config } from '@trellis/core';
import {
  Coordinator,
  type ChildRunsPort,
  type LogChunkSink,
  type WorkerChange,
  type WorkerView,
} from '@trellis/coordinator';
import { BullmqDispatcher, RedisFleet, createRedis } from '@trellis/dispatch/remote';
import type { RunEvents } from '@trellis/services';
import { tlsOf } from './fleet-tls.js';
import { logRedisOutages } from './redis-log.js';
import type { RuntimeStore } from './runtime-store.js';

/** The coordinator side of distributed mode in one process: gRPC coordinator + BullMQ dispatch. */
export interface Fleet {
  readonly coordinator: Coordinator;
  readonly dispatcher: BullmqDispatcher;
  /** Starts and watches the child runs workers ask for (the run service's child path). */
  children: ChildRunsPort | undefined;
  /** Where dispatch-to-claim latencies go (metrics). */
  onClaimed: (latencyMs: number) => void;
  /** Binds gRPC and loads the known dispatch queues. Errors name the address and the fix. */
  start(): Promise<void>;
  stop(): Promise<void>;
  workers(): WorkerView[];
}

const noChildren = (): Error =>
  new Error('child runs for workers are not wired in this process (no run service)');

/** Publishes a worker joining or being lost as `worker:joined` / `worker:lost`. */
const workerEventsTo =
  (events: RunEvents) =>
  (c: WorkerChange): void =>
    void events.publish({
      type: c.kind === 'joined' ? 'worker:joined' : 'worker:lost',
      data: { workerId: c.workerId, labels: c.labels },
    });

/**
 * Wires the coordinator (single writer of remote runs' records and logs) and the BullMQ
 * dispatcher over the same store. Only when `redis.url` is set (distributed mode).
 */
export const makeFleet = (
  config: Readonly<Config>,
  store: RuntimeStore,
  clock: Clock,
  log: (line: string) => void,
  events?: RunEvents,
  more: { readonly logChunks?: LogChunkSink | undefined } = {},
): Fleet | undefined => {
  const url = config.redis?.url;
  if (url === undefined) return undefined;
  const c = config.coordinator;
  const tls = tlsOf(config);
  let onClaimed: (latencyMs: number) => void = () => undefined;
  let children: ChildRunsPort | undefined;
  const redis = createRedis(url);
  logRedisOutages(redis, url, log); // reconnects on its own; one line per outage
  const coordinator = new Coordinator({
    store,
    clock,
    logDir: config.paths.logDir,
    ...(more.logChunks ? { logChunks: more.logChunks } : {}),
    writeErrors: store.writeErrors,
    host: c.host,
    port: c.port,
    ...(c.advertise ? { advertise: c.advertise } : {}),
    ...(tls ? { tls } : {}),
    tokens: c.tokens,
    insecure: c.insecure,
    // the coordinator writes workers' reports; the dispatcher tells admission (its run-update event)
    onRunUpdate: (r) => remote.reportRunUpdate(r),
    onClaimed: (ms) => onClaimed(ms),
    ...(events ? { onWorkerChange: workerEventsTo(events) } : {}),
    children: {
      start: (req) => (children ? children.start(req) : Promise.reject(noChildren())),
      status: (ref, root) => (children ? children.status(ref, root) : Promise.reject(noChildren())),
      cancel: (ref, root) => (children ? children.cancel(ref, root) : Promise.resolve(false)),
    },
    warn: (m) => log(`warning: coordinator: ${m}`),
    // replicated coordinators on one Redis see each other's workers (docs/ha.md)
    fleet: new RedisFleet(redis, clock),
  });
  const remote = new BullmqDispatcher({ redis, coordinator, clock });
  return {
    coordinator,
    dispatcher: remote,
    set children(c: ChildRunsPort | undefined) {
      children = c;
    },
    get children() {
      return children;
    },
    set onClaimed(f: (latencyMs: number) => void) {
      onClaimed = f;
    },
    get onClaimed() {
      return onClaimed;
    },
    start: async () => {
      try {
        await coordinator.start();
      } catch (e) {
        const msg = (e as Error).message;
        throw new Error(
          /EADDRINUSE|address already in use|No address added/i.test(msg)
            ? `the gRPC coordinator cannot listen on ${c.host}:${c.port} (in use?): choose another with --coordinator-port or SVC_COORDINATOR_PORT`
            : `the gRPC coordinator cannot start on ${c.host}:${c.port}: ${msg}`,
          { cause: e },
        );
      }
      await remote.start();
      log(
        `coordinator listening on ${c.host}:${coordinator.port} (workers dial ${coordinator.advertise}${tls ? (tls.caFile ? ', mutual TLS' : ', TLS') : ''}${c.tokens.length > 0 ? `, ${c.tokens.length} worker token(s)` : ''})`,
      );
    },
    stop: async () => {
      await remote.close();
      await coordinator.stop();
      redis.disconnect();
    },
    workers: () => coordinator.workers(),
  };
};
