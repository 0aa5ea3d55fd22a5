import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunStatus, systemClock } from '@trellis/core';
import { Coordinator, type ChildRunsPort } from '@trellis/coordinator';
import { parseDagFile, type Dag, type DagRunRecord } from '@trellis/spec';
import { FsRunStore } from '@trellis/store';
import { BullmqDispatcher } from '../../src/remote/bullmq-dispatcher.js';
import { createRedis } from '../../src/remote/redis-connection.js';
import type { PrivateRedis } from '@trellis/testkit';

/** A coordinator, a dispatcher and a file store in this process, for tests and benchmarks. */
export interface CoordinatorSide {
  readonly home: string;
  readonly store: FsRunStore;
  readonly coordinator: Coordinator;
  readonly dispatcher: BullmqDispatcher;
  /**
   * Stops the coordinator, waits `downMs`, and starts a new one on the same port and store.
   * `whileDown` runs once it is stopped (to replace what a new process would hold anew).
   */
  restartCoordinator(downMs: number, whileDown?: () => void | Promise<void>): Promise<void>;
  readonly updates: DagRunRecord[];
  /** Hears every record the coordinator writes (a RunService's `onRemoteUpdate`). */
  readonly onRunUpdate: Set<(record: DagRunRecord) => void>;
  /** Starts the child runs workers ask for (`StartChildRun`), as the CLI wires a RunService. */
  children: ChildRunsPort | undefined;
  /** Resolves with the run's record once it is final. */
  final(dagRunId: string): Promise<DagRunRecord>;
  /** Creates a run of `yaml`'s DAG in the store and dispatches it. */
  submit(yaml: string, dagRunId: string): Promise<DagRunRecord>;
  close(): Promise<void>;
}

export const parseDag = (yaml: string): { dag: Dag; localDags: Dag[] } => {
  const f = parseDagFile(yaml);
  if (!f.valid) throw new Error(f.errors.join('\n'));
  return { dag: f.main.dag, localDags: f.localDags.map((d) => d.dag) };
};

export const startCoordinatorSide = async (
  redis: PrivateRedis,
  opts: { port?: number; home?: string; prefix?: string } = {},
): Promise<CoordinatorSide> => {
  const home = opts.home ?? mkdtempSync(join(tmpdir(), 'trellis-fleet-'));
  const clock = systemClock;
  const store = new FsRunStore({
    dataDir: join(home, 'data'),
    logDir: join(home, 'logs'),
    clock,
  });
  const updates: DagRunRecord[] = [];
  const waiters = new Map<string, (r: DagRunRecord) => void>();
  const listeners = new Set<(record: DagRunRecord) => void>();
  let children: ChildRunsPort | undefined;
  const unwired = (): Promise<never> =>
    Promise.reject(new Error('no child runs port in this test (set side.children)'));
  const makeCoordinator = (port: number): Coordinator =>
    new Coordinator({
      store,
      clock,
      logDir: join(home, 'logs'),
      port,
      onRunUpdate: (r) => {
        updates.push(structuredClone(r));
        if ([2, 3, 4, 6].includes(r.status)) waiters.get(r.dagRunId)?.(r);
        for (const l of listeners) l(r);
      },
      children: {
        start: (req) => (children ? children.start(req) : unwired()),
        status: (ref, root) => (children ? children.status(ref, root) : unwired()),
        cancel: (ref, root) => (children ? children.cancel(ref, root) : Promise.resolve(false)),
      },
    });
  let coordinator = makeCoordinator(opts.port ?? 0);
  await coordinator.start();
  const redisConn = createRedis(redis.url);
  const makeDispatcher = (): BullmqDispatcher =>
    new BullmqDispatcher({
      redis: redisConn,
      coordinator,
      clock,
      ...(opts.prefix ? { prefix: opts.prefix } : {}),
    });
  let dispatcher = makeDispatcher();
  await dispatcher.start();
  return {
    home,
    store,
    get coordinator() {
      return coordinator;
    },
    get dispatcher() {
      return dispatcher;
    },
    restartCoordinator: async (downMs, whileDown) => {
      const port = coordinator.port;
      await dispatcher.close();
      await coordinator.stop();
      await whileDown?.();
      await clock.sleep(downMs);
      coordinator = makeCoordinator(port);
      await coordinator.start();
      dispatcher = makeDispatcher();
      await dispatcher.start();
    },
    updates,
    onRunUpdate: listeners,
    get children() {
      return children;
    },
    set children(c: ChildRunsPort | undefined) {
      children = c;
    },
    final: async (id) => {
      const found = updates.find((u) => u.dagRunId === id && [2, 3, 4, 6].includes(u.status));
      if (found) return found;
      return new Promise((resolve) => waiters.set(id, resolve));
    },
    submit: async (yaml, dagRunId) => {
      const { dag, localDags } = parseDag(yaml);
      const now = clock.now().toISOString();
      const record: DagRunRecord = {
        name: dag.name,
        dagRunId,
        root: { name: dag.name, dagRunId },
        status: RunStatus.Running,
        createdAt: now,
        queuedAt: now,
        startedAt: '',
        finishedAt: '',
        // as admission does: under the DAG's own logDir when it sets one
        log: store.runLogPath({ name: dag.name, dagRunId }, dag.logDir),
        params: dag.params.map((p) => ({ name: p.name, value: p.value })),
        nodes: [],
        preconditions: [],
        error: '',
        owner: { pid: process.pid, host: hostname(), processStart: '', workerId: 'local' },
        queue: dag.queue ?? dag.name,
        revision: 0,
      };
      await store.createRun(record, { dag, localDags });
      await dispatcher.dispatch({ record, dag, localDags });
      return record;
    },
    close: async () => {
      await dispatcher.close();
      await coordinator.stop();
      redisConn.disconnect();
      if (!opts.home) rmSync(home, { recursive: true, force: true });
    },
  };
};
