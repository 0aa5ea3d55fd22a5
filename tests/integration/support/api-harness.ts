import {
  createHttpApp,
  noAuth,
  type Authenticator,
  type HttpDeps,
  type RouteTables,
} from '@trellis/api';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { systemClock, type Clock } from '@trellis/core';
import type { EngineEvents } from '@trellis/engine';
import {
  IdempotentTriggers,
  InMemoryRunEvents,
  RecordTransitions,
  RunReads,
  WebhookDeliveries,
  fetchWebhookTransport,
  type DagDefinitions,
  type RunReadStore,
  type RunService,
} from '@trellis/services';
import {
  DagFileLoader,
  FsIdempotencyJournal,
  FsWebhookJournal,
  type FsRunStore,
} from '@trellis/store';
import type { DagRunRecord } from '@trellis/spec';
import { createTempHome, localRunService, type TempHome } from './local-run-service.js';

/** A test API on a temp SVC_HOME with the real store, engine and /bin/sh. */
export interface ApiHarness {
  readonly app: ReturnType<typeof createHttpApp>;
  readonly home: string;
  readonly store: FsRunStore;
  readonly runs: RunService;
  readonly events: EngineEvents;
  /** The event bus the API's long-poll and event streams read (fed by the store). */
  readonly runEvents: InMemoryRunEvents;
  /** Writes `<dagsDir>/<name>.yaml`. */
  dag(name: string, yaml: string): void;
  /** Resolves with the final record of run `dagRunId` (also when it already finished). */
  finished(name: string, dagRunId: string): Promise<DagRunRecord>;
  cleanup(): void;
}

/**
 * Builds the harness. `dags` supplies the DAG definitions service (the DAG endpoints' own);
 * by default a minimal one over DagFileLoader that serves what the run endpoints need.
 */
export const apiHarness = (
  tables: RouteTables,
  opts: {
    dags?: (dagsDir: string) => DagDefinitions;
    auth?: Authenticator;
    queueConfig?: HttpDeps['queueConfig'];
    sse?: HttpDeps['sse'];
    /** The worker registry GET /workers reads; absent = no coordinator (503). */
    workers?: HttpDeps['workers'];
    /** Cordon, drain and uncordon (with `workers`). @default the listed worker in its new state */
    setWorkerState?: HttpDeps['setWorkerState'];
    /** An existing home (a server restarted on it); `cleanup` removes it. @default a new one */
    home?: TempHome;
    /** The clock of the idempotency keys (`<home>/data/idempotency`). @default systemClock */
    idempotencyClock?: Clock;
    /** Webhook deliveries fed by the harness's event bus; absent = none (503). */
    webhooks?: (runEvents: InMemoryRunEvents, home: string) => HttpDeps['webhooks'];
    /** The store the read endpoints use. @default the harness's file store */
    reads?: RunReadStore;
  } = {},
): ApiHarness => {
  const t = opts.home ?? createTempHome('trellis-api-');
  const { home, dagsDir } = t;
  const runEvents = new InMemoryRunEvents({ clock: systemClock });
  const transitions = new RecordTransitions(runEvents);
  const { runs, store, events } = localRunService(t, {
    processQueues: true,
    queues: opts.queueConfig ?? [],
    maxListeners: 0,
    onRecordSaved: (r) => transitions.recordSaved(r),
  });
  const catalog = new DagFileLoader(dagsDir);
  const dags = opts.dags?.(dagsDir) ?? catalogDefinitions(catalog);
  const deps: HttpDeps = {
    version: '0.0.0-test',
    startedAt: systemClock.now(),
    clock: systemClock,
    dags,
    runs,
    reads: new RunReads(opts.reads ?? store),
    events: runEvents,
    finals: transitions,
    idempotency: idempotencyIn(home, opts.idempotencyClock ?? systemClock),
    ...(opts.sse ? { sse: opts.sse } : {}),
    auth: opts.auth ?? noAuth,
    log: { warn: () => undefined, error: () => undefined },
    health: () => Promise.resolve({}),
    metrics: () => Promise.resolve({ contentType: 'text/plain', body: '' }),
    ...(opts.queueConfig ? { queueConfig: opts.queueConfig } : {}),
    ...(opts.workers ? workersOf(opts.workers) : {}),
    ...(opts.workers && opts.setWorkerState ? { setWorkerState: opts.setWorkerState } : {}),
    ...webhooksOf(opts.webhooks?.(runEvents, home)),
  };
  return {
    app: createHttpApp(deps, tables),
    home,
    store,
    runs,
    events,
    runEvents,
    dag: t.dag,
    finished: async (name, dagRunId) => {
      const waiting = new Promise<DagRunRecord>((resolve) => {
        const on = (r: DagRunRecord): void => {
          if (r.dagRunId === dagRunId) {
            events.off('run:finished', on);
            resolve(r);
          }
        };
        events.on('run:finished', on);
      });
      const now = await store.getRun({ name, dagRunId }).catch(() => undefined);
      if (now && now.finishedAt !== '') return now;
      return waiting;
    },
    cleanup: t.cleanup,
  };
};

const webhooksOf = (w: HttpDeps['webhooks']): Pick<HttpDeps, 'webhooks'> =>
  w ? { webhooks: w } : {};

/** Webhook deliveries with no subscription, as a server without `webhooks` in its config has. */
export const unsubscribedWebhooks = (events: InMemoryRunEvents, home: string): WebhookDeliveries =>
  new WebhookDeliveries({
    subscriptions: [],
    journal: new FsWebhookJournal({ dir: join(home, 'data', 'webhooks'), warn: () => undefined }),
    transport: fetchWebhookTransport,
    events,
    clock: systemClock,
    policy: { baseDelayMs: 1000, maxDelayMs: 60_000, retryForMs: 60_000 },
    timeoutMs: 1000,
    maxJournalEntries: 10,
    ids: randomUUID,
    warn: () => undefined,
  });

/** Idempotency keys under `<home>/data/idempotency`, as `trellis server` keeps them. */
const idempotencyIn = (home: string, clock: Clock): IdempotentTriggers =>
  new IdempotentTriggers({
    journal: new FsIdempotencyJournal({ dir: join(home, 'data', 'idempotency'), clock }),
    clock,
  });

/** The part of DagDefinitions the run endpoints use, over DagFileLoader. */
const catalogDefinitions = (catalog: DagFileLoader): DagDefinitions => {
  const notHere = (): never => {
    throw new Error('not provided by the test harness');
  };
  return {
    load: (f) => Promise.resolve(catalog.load(f)),
    get: (f) => {
      const l = catalog.load(f);
      return Promise.resolve({
        fileName: f,
        dag: l.dag,
        localDags: [],
        errors: [],
        suspended: false,
      });
    },
    list: notHere,
    create: notHere,
    search: notHere,
    tags: notHere,
    validate: notHere,
    delete: notHere,
    getSpec: (f) => Promise.resolve({ dag: catalog.load(f).dag, spec: '', errors: [] }),
    putSpec: notHere,
    rename: notHere,
    setSuspended: notHere,
    isSuspended: () => false,
  };
};

/**
 * A coordinator's worker deps over a fixed registry: GET /workers lists it, and cordon, drain and
 * uncordon answer the listed worker in its new state (404 for another id), as the coordinator does.
 */
const workersOf = (
  workers: NonNullable<HttpDeps['workers']>,
): Pick<HttpDeps, 'workers' | 'setWorkerState'> => ({
  workers,
  setWorkerState: (id, state) => {
    const w = workers().find((x) => x.id === id);
    return Promise.resolve(w && { worker: { ...w, state }, handedOn: false });
  },
});
