import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { afterEach, beforeEach } from 'vitest';
import { FsDagStore } from '@trellis/store';
import type { DagRunRecord } from '@trellis/spec';
import { FakeClock } from '@trellis/testkit';
import { createHttpApp, dagRoutes, noAuth, type Authenticator, type HttpDeps } from '@trellis/api';

/** The DAG endpoints over a temp dags folder, rebuilt before each test of the calling file. */
export interface DagRoutesFixture {
  /** The temp dags folder of the current test. */
  readonly dagsDir: () => string;
  /** Latest run per DAG name, as the DAG definitions service sees it. */
  readonly latest: () => Map<string, DagRunRecord>;
  /** Rebuilds the app with another authenticator (noAuth by default). */
  readonly useAuth: (auth: Authenticator) => void;
  readonly api: () => ReturnType<typeof request>;
  /** Writes `<dagsDir>/<entry>`. */
  readonly write: (entry: string, text: string) => void;
  readonly read: (entry: string) => string;
  /** The dags folder's entries, sorted. */
  readonly files: () => string[];
}

/** A valid one-step DAG, after the `extra` top-level lines. */
export const dagYaml = (extra = ''): string =>
  `${extra}${extra ? '\n' : ''}steps:\n  - name: s\n    command: echo s\n`;

/** Registers beforeEach/afterEach hooks in the calling test file; call at its top level. */
export const useDagRoutes = (): DagRoutesFixture => {
  let home = '';
  let dagsDir = '';
  let latest = new Map<string, DagRunRecord>();
  let app: ReturnType<typeof createHttpApp> | undefined;

  const appWith = (auth: Authenticator): ReturnType<typeof createHttpApp> => {
    const clock = new FakeClock('2026-01-02T03:04:05.000Z');
    const dags = new FsDagStore({
      dagsDir,
      suspendDir: join(home, 'suspend'),
      clock,
      latestRun: (name) => Promise.resolve(latest.get(name)),
    });
    const deps: HttpDeps = {
      version: '0.0.0-test',
      startedAt: clock.now(),
      clock,
      dags,
      runs: {} as never,
      reads: {} as never,
      auth,
      log: { warn: () => undefined, error: () => undefined },
      health: () => Promise.resolve({}),
      metrics: () => Promise.resolve({ contentType: 'text/plain', body: '' }),
    };
    return createHttpApp(deps, [dagRoutes]);
  };

  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'trellis-api-dags-'));
    dagsDir = join(home, 'dags');
    mkdirSync(dagsDir);
    latest = new Map();
    app = appWith(noAuth);
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  return {
    dagsDir: () => dagsDir,
    latest: () => latest,
    useAuth: (auth) => {
      app = appWith(auth);
    },
    api: () => {
      if (!app) throw new Error('useDagRoutes: the app exists inside tests only');
      return request(app);
    },
    write: (entry, text) => writeFileSync(join(dagsDir, entry), text),
    read: (entry) => readFileSync(join(dagsDir, entry), 'utf8'),
    files: () => readdirSync(dagsDir).sort(),
  };
};
