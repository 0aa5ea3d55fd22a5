import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createHttpApp,
  noAuth,
  type Authenticator,
  type HttpDeps,
  type RouteTables,
} from '@trellis/api';
import { systemClock, sequentialIdGenerator } from '@trellis/core';
import { createLocalDispatcher } from '@trellis/dispatch';
import { EngineEvents } from '@trellis/engine';
import { ShellCommandRunner, ShellExecutor } from '@trellis/executors';
import { RunReads, RunService, type DagDefinitions } from '@trellis/services';
import { DagFileLoader } from '@trellis/store';
import { FsRunStore, currentOwner, isOwnerAlive, processStartTime } from '@trellis/store';
import type { DagRunRecord } from '@trellis/spec';

/** A test API on a temp SVC_HOME with the real store, engine and /bin/sh. */
export interface ApiHarness {
  readonly app: ReturnType<typeof createHttpApp>;
  readonly home: string;
  readonly store: FsRunStore;
  readonly runs: RunService;
  readonly events: EngineEvents;
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
  } = {},
): ApiHarness => {
  const home = mkdtempSync(join(tmpdir(), 'trellis-api-'));
  const dagsDir = join(home, 'dags');
  mkdirSync(dagsDir);
  const store = new FsRunStore({
    dataDir: join(home, 'data'),
    logDir: join(home, 'logs'),
    clock: systemClock,
  });
  const events = new EngineEvents();
  events.setMaxListeners(0);
  const catalog = new DagFileLoader(dagsDir);
  const runs: RunService = new RunService({
    store,
    dags: catalog,
    clock: systemClock,
    ids: sequentialIdGenerator(),
    processes: { owner: currentOwner(), isOwnerAlive, processStartTime },
    processQueues: true,
    queues: opts.queueConfig ?? [],
    local: createLocalDispatcher({
      clock: systemClock,
      executors: { shell: new ShellExecutor() },
      commands: new ShellCommandRunner(),
      systemEnv: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home },
      defaultShell: 'sh',
      events,
      store: store,
      children: () => runs,
    }),
  });
  const dags = opts.dags?.(dagsDir) ?? catalogDefinitions(catalog);
  const deps: HttpDeps = {
    version: '0.0.0-test',
    startedAt: systemClock.now(),
    clock: systemClock,
    dags,
    runs,
    reads: new RunReads(store),
    auth: opts.auth ?? noAuth,
    log: { warn: () => undefined, error: () => undefined },
    health: () => Promise.resolve({}),
    metrics: () => Promise.resolve({ contentType: 'text/plain', body: '' }),
    ...(opts.queueConfig ? { queueConfig: opts.queueConfig } : {}),
  };
  return {
    app: createHttpApp(deps, tables),
    home,
    store,
    runs,
    events,
    dag: (name, yaml) => writeFileSync(join(dagsDir, `${name}.yaml`), yaml),
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
    cleanup: () => rmSync(home, { recursive: true, force: true }),
  };
};

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
    getSpec: notHere,
    putSpec: notHere,
    rename: notHere,
    setSuspended: notHere,
    isSuspended: () => false,
  };
};
