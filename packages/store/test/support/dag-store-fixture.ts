import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { AppError, type Clock } from '@trellis/core';
import { parseDagFile, type DagRunRecord } from '@trellis/spec';
import { makeRunRecord } from '@trellis/testkit';
import type { DagListQuery } from '@trellis/services';
import { FsDagStore } from '../../src/dags/fs-dag-store.js';

/**
 * Shared setup of the FsDagStore integration tests (`src/dags/fs-dag-store.*.int.test.ts`).
 * Test support only: not exported from the package entry.
 */

/** A clock tests set directly, forwards or backwards. */
class SettableClock implements Clock {
  constructor(public time: Date) {}
  now(): Date {
    return new Date(this.time.getTime());
  }
  sleep(): Promise<void> {
    return Promise.resolve();
  }
}

/** What each test gets afresh: a temporary home with an empty DAGs folder, and a store on it. */
interface DagStoreEnv {
  readonly home: string;
  readonly dagsDir: string;
  /** Not created: the store creates it on the first suspension. */
  readonly suspendDir: string;
  /** At 2026-01-02T03:04:05.000Z until a test sets `time`. */
  readonly clock: SettableClock;
  /** Locations parsed so far (the injected parser records each call). */
  readonly parsed: string[];
  /** What the injected `latestRun` answers per DAG name; an Error is thrown. */
  readonly latestRuns: Map<string, DagRunRecord | Error>;
  /** DAG names the store asked `latestRun` for, in order. */
  readonly latestAsked: string[];
  readonly defs: FsDagStore;
}

/** The environment of the running test, plus helpers on its DAGs folder. */
export interface DagStoreFixture extends DagStoreEnv {
  /** Writes `text` to the entry `entry` of the DAGs folder. */
  readonly write: (entry: string, text: string) => void;
  /** The text of the entry `entry` of the DAGs folder. */
  readonly read: (entry: string) => string;
  /** The entries of the DAGs folder, sorted. */
  readonly files: () => string[];
  /** The file names `defs.list` answers for `query(q)`, in order. */
  readonly listNames: (q?: Partial<DagListQuery>) => Promise<string[]>;
}

/** A list query: page 1 of 50 by name ascending, overridden by `q`. */
export const query = (q: Partial<DagListQuery> = {}): DagListQuery => ({
  page: 1,
  perPage: 50,
  sort: 'name',
  order: 'asc',
  ...q,
});

const newEnv = (): DagStoreEnv => {
  const home = mkdtempSync(join(tmpdir(), 'trellis-dags-'));
  const dagsDir = join(home, 'dags');
  const suspendDir = join(home, 'suspend');
  mkdirSync(dagsDir);
  const parsed: string[] = [];
  const latestRuns = new Map<string, DagRunRecord | Error>();
  const latestAsked: string[] = [];
  const clock = new SettableClock(new Date('2026-01-02T03:04:05.000Z'));
  const defs = new FsDagStore({
    dagsDir,
    suspendDir,
    clock,
    latestRun: (name) => {
      latestAsked.push(name);
      const r = latestRuns.get(name);
      return r instanceof Error ? Promise.reject(r) : Promise.resolve(r);
    },
    parse: (text, o) => {
      parsed.push(o?.location ?? '');
      return parseDagFile(text, o);
    },
  });
  return { home, dagsDir, suspendDir, clock, parsed, latestRuns, latestAsked, defs };
};

/**
 * Registers a `beforeEach` that builds a fresh environment and an `afterEach` that removes it;
 * call once at the top of a test file. Read the environment's fields inside tests (they change
 * per test); the helper functions may be destructured once.
 */
export const useDagStoreFixture = (): DagStoreFixture => {
  let env: DagStoreEnv | undefined;
  const current = (): DagStoreEnv => {
    if (!env) throw new Error('the DAG store fixture is used outside a test');
    return env;
  };
  beforeEach(() => {
    env = newEnv();
  });
  afterEach(() => {
    const { home } = current();
    env = undefined;
    rmSync(home, { recursive: true, force: true });
  });
  return {
    get home() {
      return current().home;
    },
    get dagsDir() {
      return current().dagsDir;
    },
    get suspendDir() {
      return current().suspendDir;
    },
    get clock() {
      return current().clock;
    },
    get parsed() {
      return current().parsed;
    },
    get latestRuns() {
      return current().latestRuns;
    },
    get latestAsked() {
      return current().latestAsked;
    },
    get defs() {
      return current().defs;
    },
    write: (entry, text) => writeFileSync(join(current().dagsDir, entry), text),
    read: (entry) => readFileSync(join(current().dagsDir, entry), 'utf8'),
    files: () => readdirSync(current().dagsDir).sort(),
    listNames: async (q = {}) =>
      (await current().defs.list(query(q))).entries.map((e) => e.fileName),
  };
};

/** A valid one-step DAG file, with `extra` top-level lines first. */
export const dagYaml = (extra = ''): string =>
  `${extra}${extra ? '\n' : ''}steps:\n  - name: s\n    command: echo s\n`;

/** A run record of a one-step DAG called `name`. */
export const runOf = (name: string, dagRunId: string): DagRunRecord =>
  makeRunRecord(parseDagFile('steps: [echo hi]', { name }).main.dag, dagRunId);

/** The AppError code `p` fails with; undefined when it succeeds. */
export const codeOf = async (
  p: Promise<unknown> | (() => unknown),
): Promise<string | undefined> => {
  try {
    await (typeof p === 'function' ? p() : p);
    return undefined;
  } catch (e) {
    return AppError.is(e) ? e.code : `not an AppError: ${String(e)}`;
  }
};
