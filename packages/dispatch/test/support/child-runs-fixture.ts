import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { sequentialIdGenerator, systemClock } from '@trellis/core';
import { ShellCommandRunner, ShellExecutor } from '@trellis/executors';
import { RunService, WorkerChildRuns, type RunServiceDeps } from '@trellis/services';
import { DagFileLoader } from '@trellis/store';
import type { ChildRunRequest, ChildRunResult } from '@trellis/engine';
import type { DagRunRecord, RunRef } from '@trellis/spec';
import { currentOwner, isOwnerAlive, processStartTime } from '@trellis/store';
import { createLocalDispatcher } from '../../src/local/local-dispatcher.js';
import { useWorkerFleet, type WorkerFleetFixture } from './worker-fleet-fixture.js';

/**
 * Child runs sent to workers by a selector: parents run in this process (the coordinator's, as
 * in start-all) with a RunService over the coordinator's store and dispatcher, as the CLI wires
 * them, or on workers (submitted to the fleet).
 */
export interface ChildRunsFixture {
  /** Starts parents in this process. */
  readonly runs: RunService;
  /** Child runs workers asked the coordinator for, by run id: each one's end. */
  readonly asked: Map<string, Promise<ChildRunResult>>;
  /**
   * Children that parents on workers ask for, as the CLI wires them in the coordinator's
   * process: a coordinator restart (a new process) starts with a new one.
   */
  readonly workerChildRuns: () => WorkerChildRuns;
  /** Resolves once the child a worker asked for under root run `rootId` is stored (queued). */
  readonly childStored: (rootId: string) => Promise<ChildRunRequest>;
  /** Writes a DAG file the parents in this process start from. */
  readonly dagFile: (name: string, yaml: string) => void;
  /** The stored record of the first child run of a parent's first step. */
  readonly childOf: (parent: DagRunRecord) => Promise<DagRunRecord>;
  /** Resolves with the first record the coordinator writes for a run of `dagName` matching `pred`. */
  readonly childUpdate: (
    dagName: string,
    pred: (r: DagRunRecord) => boolean,
  ) => Promise<DagRunRecord>;
}

/** A parent DAG for workers with `pool: <parentPool>` whose step calls `kid` on `childPool`. */
export const parentOnWorker = (
  name: string,
  parentPool: string,
  childPool: string,
  kid: string[],
): string =>
  [
    `name: ${name}`,
    'workerSelector:',
    `  pool: ${parentPool}`,
    'steps:',
    '  - name: call-kid',
    '    call: kid',
    '    output: CHILD',
    '    workerSelector:',
    `      pool: ${childPool}`,
    '  - name: show',
    '    command: echo got-${CHILD.outputs.WHERE}',
    '    output: SHOWN',
    '---',
    'name: kid',
    'steps:',
    ...kid,
    '',
  ].join('\n');

/**
 * Registers beforeAll/afterAll hooks (after the fleet's) in the calling file or describe block: the
 * RunService, its DAG directory, and the side's child runs port.
 */
export const useChildRuns = (fleet: WorkerFleetFixture): ChildRunsFixture => {
  let runs: RunService | undefined;
  let dagsDir = '';
  let unlisten: () => void = () => undefined;
  const asked = new Map<string, Promise<ChildRunResult>>();
  /** Hears the child a worker asked for being stored, by its root's run id. */
  const storedUnder = new Map<string, (req: ChildRunRequest) => void>();

  const service = (): RunService => {
    if (!runs) throw new Error('useChildRuns: the run service exists inside tests only');
    return runs;
  };
  const workerChildRuns = (): WorkerChildRuns =>
    new WorkerChildRuns({
      children: {
        run: (req, opts) => {
          const done = service().run(req, {
            onStored: () => {
              opts.onStored();
              storedUnder.get(req.root.dagRunId)?.(req);
            },
          });
          asked.set(req.dagRunId, done);
          return done;
        },
      },
      store: fleet.side.store,
      clock: systemClock,
      warn: () => undefined,
    });

  beforeAll(() => {
    dagsDir = mkdtempSync(join(tmpdir(), 'trellis-parent-dags-'));
    mkdirSync(dagsDir, { recursive: true });
    runs = parentRunService(fleet, dagsDir, service, (off) => (unlisten = off));
    fleet.side.children = workerChildRuns();
  });

  afterAll(() => {
    fleet.side.children = undefined;
    unlisten();
    if (dagsDir) rmSync(dagsDir, { recursive: true, force: true });
  });

  return {
    get runs() {
      return service();
    },
    asked,
    workerChildRuns,
    childStored: (rootId) => new Promise((resolve) => storedUnder.set(rootId, resolve)),
    dagFile: (name, yaml) => writeFileSync(join(dagsDir, `${name}.yaml`), yaml),
    childOf: (parent) => {
      const ref = parent.nodes[0]?.children[0];
      if (!ref) throw new Error(`run ${parent.dagRunId} started no child`);
      const root: RunRef = { name: parent.name, dagRunId: parent.dagRunId };
      return fleet.side.store.getRun({ name: ref.name, dagRunId: ref.dagRunId }, { root });
    },
    childUpdate: (dagName, pred) =>
      new Promise((resolve) => {
        const l = (r: DagRunRecord): void => {
          if (r.name !== dagName || r.parent === undefined || !pred(r)) return;
          fleet.side.onRunUpdate.delete(l);
          resolve(r);
        };
        fleet.side.onRunUpdate.add(l);
      }),
  };
};

/**
 * The worker fleet (useWorkerFleet) and its child runs (useChildRuns), as the child-run test
 * files use them. Call at the test file's top level: the child runs' hooks come after the fleet's,
 * so they start after it and end before it.
 */
export const useFleetWithChildRuns = (): {
  fleet: WorkerFleetFixture;
  kids: ChildRunsFixture;
} => {
  const fleet = useWorkerFleet();
  return { fleet, kids: useChildRuns(fleet) };
};

/** A RunService over the side's store and dispatcher, as the CLI wires one in start-all. */
const parentRunService = (
  fleet: WorkerFleetFixture,
  dagsDir: string,
  children: () => RunService,
  onListening: (unlisten: () => void) => void,
): RunService =>
  new RunService({
    store: fleet.side.store,
    dags: new DagFileLoader(dagsDir),
    clock: systemClock,
    ids: sequentialIdGenerator('parent-'),
    processes: { owner: currentOwner(), isOwnerAlive, processStartTime },
    dispatcher: sideDispatcher(fleet, onListening),
    local: createLocalDispatcher({
      clock: systemClock,
      executors: { shell: new ShellExecutor() },
      commands: new ShellCommandRunner(),
      systemEnv: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: dagsDir },
      defaultShell: 'sh',
      store: fleet.side.store,
      children,
    }),
  });

/** Delegates to the side's current dispatcher (a coordinator restart replaces it). */
const sideDispatcher = (
  fleet: WorkerFleetFixture,
  onListening: (unlisten: () => void) => void,
): NonNullable<RunServiceDeps['dispatcher']> => ({
  availability: (sel) => fleet.side.dispatcher.availability(sel),
  dispatch: (a) => fleet.side.dispatcher.dispatch(a),
  cancel: (ref, root) => fleet.side.dispatcher.cancel(ref, root),
  onCapacity: (l) => fleet.side.dispatcher.onCapacity(l),
  // the coordinator's writes (this side's hook) are the remote run-update event
  onRunUpdate: (l) => {
    fleet.side.onRunUpdate.add(l);
    const unlisten = (): boolean => fleet.side.onRunUpdate.delete(l);
    onListening(unlisten);
    return unlisten;
  },
});
