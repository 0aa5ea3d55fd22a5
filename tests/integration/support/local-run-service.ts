import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sequentialIdGenerator, systemClock, type Clock, type IdGenerator } from '@trellis/core';
import { createLocalDispatcher } from '@trellis/dispatch';
import { EngineEvents } from '@trellis/engine';
import { ShellCommandRunner, ShellExecutor, type ExecutorSet } from '@trellis/executors';
import { RetentionOnStart } from '@trellis/scheduler';
import { RunService, type CustomQueue, type RunDispatcher } from '@trellis/services';
import type { DagRunRecord } from '@trellis/spec';
import {
  DagFileLoader,
  FsRunStore,
  currentOwner,
  isOwnerAlive,
  processStartTime,
} from '@trellis/store';

/*
 * Test support for integration tests of RunService over the real file store, DagFileLoader, the
 * local dispatcher and /bin/sh. It lives outside packages/services because it wires concretes
 * that services itself must not import (store, dispatch).
 */

/** A temp SVC_HOME: `home` with an empty `dags/` folder in it. */
export interface TempHome {
  readonly home: string;
  readonly dagsDir: string;
  /** Writes `<dagsDir>/<name>.yaml`. */
  dag(name: string, yaml: string): void;
  cleanup(): void;
}

/** Makes a temp home under the OS temp folder; `prefix` names it (e.g. `trellis-svc-`). */
export const createTempHome = (prefix: string): TempHome => {
  const home = mkdtempSync(join(tmpdir(), prefix));
  const dagsDir = join(home, 'dags');
  mkdirSync(dagsDir);
  return {
    home,
    dagsDir,
    dag: (name, yaml) => writeFileSync(join(dagsDir, `${name}.yaml`), yaml),
    cleanup: () => rmSync(home, { recursive: true, force: true }),
  };
};

/** What differs between the tests' services; each is passed to RunService only when given. */
export interface LocalRunServiceOptions {
  /** @default systemClock (for the store too) */
  readonly clock?: Clock;
  /** @default sequentialIdGenerator() */
  readonly ids?: IdGenerator;
  readonly queues?: readonly CustomQueue[];
  /** Whether this service keeps the admission ledger (runs the queues). */
  readonly processQueues?: boolean;
  readonly dispatcher?: RunDispatcher;
  readonly warn?: (message: string) => void;
  /** Sets the engine events' listener limit (0: none), for tests that add many listeners. */
  readonly maxListeners?: number;
  /** Every executor and run hook (createExecutorSet) instead of only the shell executor. */
  readonly executorSet?: ExecutorSet;
  /** The store's `onRecordSaved` (the event bus's feed). */
  readonly onRecordSaved?: (record: DagRunRecord) => void;
}

/**
 * A RunService on `t`: FsRunStore under `<home>/data` and `<home>/logs`, DagFileLoader over
 * `t.dagsDir`, the shell executor (or the given executor set) and command runner with `sh`, and
 * this process as owner.
 */
export const localRunService = (t: TempHome, o: LocalRunServiceOptions = {}) => {
  const events = new EngineEvents();
  if (o.maxListeners !== undefined) events.setMaxListeners(o.maxListeners);
  const clock = o.clock ?? systemClock;
  const store = new FsRunStore({
    dataDir: join(t.home, 'data'),
    logDir: join(t.home, 'logs'),
    clock,
    ...(o.onRecordSaved ? { onRecordSaved: o.onRecordSaved } : {}),
  });
  const runs: RunService = new RunService({
    store,
    dags: new DagFileLoader(t.dagsDir),
    clock,
    ids: o.ids ?? sequentialIdGenerator(),
    processes: { owner: currentOwner(), isOwnerAlive, processStartTime },
    ...(o.queues ? { queues: o.queues } : {}),
    ...(o.processQueues !== undefined ? { processQueues: o.processQueues } : {}),
    ...(o.dispatcher ? { dispatcher: o.dispatcher } : {}),
    ...(o.warn ? { warn: o.warn } : {}),
    local: createLocalDispatcher({
      clock,
      executors: o.executorSet?.executors ?? { shell: new ShellExecutor() },
      commands: new ShellCommandRunner(),
      systemEnv: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: t.home },
      defaultShell: 'sh',
      events,
      runHooks: [...(o.executorSet?.runHooks ?? []), new RetentionOnStart({ store, clock })],
      store,
      children: () => runs,
    }),
  });
  return { runs, store, events };
};

/** A warn sink that keeps the messages; `warned(re)` resolves once one matches `re`. */
export const warningRecorder = () => {
  const warnings: string[] = [];
  const onWarn = new Set<() => void>();
  const warned = (re: RegExp): Promise<void> =>
    new Promise((resolve) => {
      const l = (): void => {
        if (!warnings.some((m) => re.test(m))) return;
        onWarn.delete(l);
        resolve();
      };
      onWarn.add(l);
      l();
    });
  const warn = (m: string): void => {
    warnings.push(m);
    for (const l of [...onWarn]) l();
  };
  return { warnings, warned, warn };
};

/** Resolves when `n` runs finished (engine events), with their final records in finishing order. */
export const finishedRuns = (events: EngineEvents, n: number): Promise<DagRunRecord[]> =>
  new Promise((resolve) => {
    const seen: DagRunRecord[] = [];
    events.on('run:finished', (r) => {
      seen.push(r);
      if (seen.length === n) resolve(seen);
    });
  });
