import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { callApi, startAll, type StartAll } from './start-all.js';

/** One instance of a replicated set on PostgreSQL (docs/ha.md). */
export interface PgInstanceOptions {
  /** The test's folder: the instance's home is `<root>/home-<n>`, the DAGs `<root>/dags`. */
  readonly root: string;
  readonly n: number;
  readonly databaseUrl: string;
  /** The lease's time to live and renewal, in ms (short, so take-overs are quick). */
  readonly lease: { readonly ttlMs: number; readonly renewMs: number };
  /** More environment (SVC_REDIS_URL) and arguments (--coordinator-port). */
  readonly env?: NodeJS.ProcessEnv;
  readonly args?: readonly string[];
}

/** Starts `trellis start-all` as instance `n` of a replicated set sharing one database. */
export const startPgInstance = async (o: PgInstanceOptions): Promise<StartAll> => {
  const home = join(o.root, `home-${o.n}`);
  const dags = join(o.root, 'dags');
  mkdirSync(home, { recursive: true });
  return startAll(
    {
      PATH: '/usr/local/bin:/usr/bin:/bin',
      HOME: home,
      SVC_HOME: home,
      SVC_DAGS_DIR: dags,
      SVC_DATABASE_URL: o.databaseUrl,
      SVC_DATABASE_LEASE_TTL_MS: String(o.lease.ttlMs),
      SVC_DATABASE_LEASE_RENEW_MS: String(o.lease.renewMs),
      ...o.env,
    },
    ['--dags', dags, ...(o.args ?? [])],
  );
};

/** `"leader"` or `"follower"`, as the instance's GET /health says. */
export const roleOf = async (s: StartAll): Promise<unknown> =>
  (await callApi(`${s.url}/api/v2`, 'GET', '/health')).body.role;

/** Lease of 2 s renewed every 0.5 s: take-overs within the tests' patience. */
export const QUICK_LEASE = { ttlMs: 2000, renewMs: 500 } as const;

/**
 * Starts instance `n` with {@link QUICK_LEASE} and adds it to `into` (the test's clean-up list);
 * with `redisUrl` and `grpcPort`, a coordinator on that port dispatching through that Redis
 * (the shared worker view).
 */
export const startListedInstance = async (
  into: StartAll[],
  o: {
    readonly root: string;
    readonly databaseUrl: string;
    readonly n: number;
    readonly redisUrl?: string;
    readonly grpcPort?: number;
  },
): Promise<StartAll> => {
  const s = await startPgInstance({
    root: o.root,
    n: o.n,
    databaseUrl: o.databaseUrl,
    lease: QUICK_LEASE,
    ...(o.redisUrl === undefined ? {} : { env: { SVC_REDIS_URL: o.redisUrl } }),
    ...(o.grpcPort === undefined ? {} : { args: ['--coordinator-port', String(o.grpcPort)] }),
  });
  into.push(s);
  return s;
};
