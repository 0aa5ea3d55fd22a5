import * as z from 'zod';
import { boolean, intAtLeast, portSchema, section, text } from './schema-helpers.js';

/*
 * The fleet's sections of the server config (Redis, PostgreSQL, the coordinator and a worker):
 * part of `ConfigSchema` (config.schema.ts), in a file of their own.
 */

const isRedisUrl = (url: string): boolean => {
  try {
    const { protocol, hostname } = new URL(url);
    return (protocol === 'redis:' || protocol === 'rediss:') && hostname !== '';
  } catch {
    return false;
  }
};

export const RedisSchema = section({
  /** Redis connection URL, `redis://[user:password@]host:port[/db]` or `rediss://` for TLS. */
  url: z.string({ error: 'use a redis:// or rediss:// URL' }).refine(isRedisUrl, {
    error: 'use a redis:// or rediss:// URL, e.g. redis://localhost:6379',
  }),
});

const isPostgresUrl = (url: string): boolean => {
  try {
    const { protocol, hostname } = new URL(url);
    return (protocol === 'postgres:' || protocol === 'postgresql:') && hostname !== '';
  } catch {
    return false;
  }
};

export const DatabaseSchema = section({
  /** PostgreSQL connection URL, `postgres://user:password@host:port/database`. */
  url: z.string({ error: 'use a postgres:// URL' }).refine(isPostgresUrl, {
    error: 'use a postgres:// URL, e.g. postgres://trellis:secret@localhost:5432/trellis',
  }),
  /**
   * Connections each process keeps to the database at most.
   * @default `10`
   */
  poolSize: intAtLeast(1, 10).default(10),
  /**
   * How long the leader lease of replicated coordinators lasts without a renewal, in ms: a
   * leader killed is replaced within about this long. At least twice `leaseRenewMs`.
   * @default `3000`
   */
  leaseTtlMs: intAtLeast(500, 3000).default(3000),
  /**
   * How often the leader renews its lease and a follower tries to take it, in ms.
   * @default `1000`
   */
  leaseRenewMs: intAtLeast(100, 1000).default(1000),
});

export const CoordinatorSchema = section({
  /**
   * Interface the gRPC coordinator listens on (distributed mode only).
   * @default `'127.0.0.1'`
   */
  host: text('a host name or IP address, e.g. 127.0.0.1 or 0.0.0.0').default('127.0.0.1'),
  /**
   * TCP port of the gRPC coordinator (1-65535).
   * @default `50055`
   */
  port: portSchema().default(50_055),
  /**
   * `host:port` that workers dial to reach this coordinator, when it differs from the listen
   * address (NAT, containers). Empty means `host:port`.
   * @default `''`
   */
  advertise: z.string({ error: 'use host:port, e.g. coordinator.internal:50055' }).default(''),
  /**
   * PEM certificate file of the coordinator: it serves TLS with it. Workers never use it (they
   * have their own in `worker.tlsCertFile`). Empty means plain gRPC (loopback, or with
   * `insecure`).
   * @default `''`
   */
  tlsCertFile: z.string({ error: 'use the path of a PEM certificate file' }).default(''),
  /**
   * PEM private key file of `tlsCertFile`; it stays on the coordinator's host.
   * @default `''`
   */
  tlsKeyFile: z.string({ error: 'use the path of a PEM private key file' }).default(''),
  /**
   * PEM CA bundle the coordinator checks worker client certificates with: when set, a worker
   * without a certificate signed by it is refused (mutual TLS).
   * @default `''`
   */
  tlsCaFile: z.string({ error: 'use the path of a PEM CA certificate file' }).default(''),
  /**
   * Worker tokens the coordinator accepts (`authorization: Bearer <token>` on every call). Two
   * at once rotate a token without downtime. Empty means no token is asked for.
   * @default `[]`
   */
  tokens: z
    .array(text('a non-empty token'), { error: 'use a list of tokens, e.g. [s3cret-1, s3cret-2]' })
    .default([]),
  /**
   * Lets the coordinator listen on a non-loopback address with neither TLS nor tokens (a private
   * network you trust). Same as `trellis coordinator --insecure`.
   * @default `false`
   */
  insecure: boolean().default(false),
});

export const WorkerSchema = section({
  /**
   * Worker id shown in `GET /workers` and heartbeats. Empty means `<hostname>@<pid>`, decided by
   * the worker at start.
   * @default `''`
   */
  id: z.string({ error: 'use a worker id such as gpu-box-1' }).default(''),
  /**
   * Labels matched against a DAG's `workerSelector` (exact, case-sensitive). Values are strings:
   * quote `"true"` or numbers in YAML.
   * @default `{}`
   */
  labels: z
    .record(
      text('a non-empty label name'),
      z.string({ error: 'use a string label value; quote it in YAML, e.g. gpu: "true"' }),
      { error: 'use a mapping of label names to values, e.g. gpu: "true"' },
    )
    .default({}),
  /**
   * How many runs this worker executes at once (at least 1).
   * @default `4`
   */
  concurrency: intAtLeast(1, 4).default(4),
  /**
   * Bytes of undelivered status reports and logs a worker keeps in its outbox (on disk under
   * `home`, kept while the coordinator is away) before step output waits for room; at least
   * 64 KiB. Status reports are never held back or dropped.
   * @default `67108864` (64 MiB)
   */
  outboxMaxBytes: intAtLeast(65_536, 67_108_864).default(67_108_864),
  /**
   * The coordinators this worker may register with, `host:port` each (replicated coordinators on
   * one database): it uses one and moves to the next when that one is lost (docs/ha.md). Empty
   * means `coordinator.advertise`, else `coordinator.host:port`; `--coordinator` overrides it.
   * @default `[]`
   */
  coordinators: z
    .array(text('a coordinator address such as 10.0.0.5:50055'), {
      error: 'use a list of host:port addresses, e.g. [10.0.0.5:50055, 10.0.0.6:50055]',
    })
    .default([]),
  /**
   * The token this worker sends to the coordinator (one of `coordinator.tokens` there).
   * @default `''`
   */
  token: z.string({ error: 'use the token the coordinator accepts' }).default(''),
  /**
   * PEM client certificate this worker presents to the coordinator (mutual TLS), made for this
   * worker (`trellis certs`); never the coordinator's own.
   * @default `''`
   */
  tlsCertFile: z.string({ error: 'use the path of a PEM certificate file' }).default(''),
  /**
   * PEM private key of `worker.tlsCertFile`.
   * @default `''`
   */
  tlsKeyFile: z.string({ error: 'use the path of a PEM private key file' }).default(''),
  /**
   * PEM CA bundle this worker checks the coordinator's certificate with; setting it (or a
   * client certificate) makes the worker dial TLS.
   * @default `''`
   */
  tlsCaFile: z.string({ error: 'use the path of a PEM CA certificate file' }).default(''),
});
