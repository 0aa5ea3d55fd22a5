import os from 'node:os';
import path from 'node:path';
import * as z from 'zod';
import { authShape, AuthSchema, AUTH_SUBKEYS } from './auth.schema.js';
import { RemoteNodesSchema, REMOTE_NODE_SUBKEYS } from './remote-nodes.schema.js';
import { WebhooksSchema, WEBHOOK_SUBKEYS } from './webhooks.schema.js';
import { CoordinatorSchema, DatabaseSchema, RedisSchema, WorkerSchema } from './fleet.schema.js';
import {
  boolean,
  checkUniqueNames,
  intAtLeast,
  listenPortSchema,
  section,
  text,
} from './schema-helpers.js';

/*
 * The server config (docs/architecture.md, "House style"): one strict zod schema, parsed once at boot by
 * `loadConfig`. Every field has a default, so `ConfigSchema.parse({ home })` is a complete config.
 * Hints in `error` are what the user sees after the offending path and value, so each one says
 * what to write instead.
 */

/**
 * Normalises a URL base path: `""` and `"/"` become `""`; anything else gets exactly one leading
 * slash, no trailing slash, and no repeated slashes (`"ui/"` -> `"/ui"`, `"//a//b/"` -> `"/a/b"`).
 */
export const normalizeBasePath = (basePath: string): string => {
  const segments = basePath
    .trim()
    .split('/')
    .filter((s) => s !== '');
  return segments.length === 0 ? '' : `/${segments.join('/')}`;
};

/** True when `tz` is empty (the local zone) or an IANA zone name the runtime knows. */
export const isTimeZone = (tz: string): boolean => {
  if (tz === '') return true;
  try {
    new Intl.DateTimeFormat(undefined, { timeZone: tz });
    return true;
  } catch {
    return false;
  }
};

/** `~/.trellis` in the current user's home directory; the loader passes its own `home`. */
const defaultHome = (): string => path.join(os.homedir(), '.trellis');

const PathsSchema = section({
  /**
   * Directory of DAG files (`<fileName>.yaml`). A relative path resolves against `home`.
   * @default `$home/dags`
   */
  dagsDir: text('a directory path').default('dags'),
  /**
   * Directory of run history, queue items and suspend flags. Relative resolves against `home`.
   * @default `$home/data`
   */
  dataDir: text('a directory path').default('data'),
  /**
   * Directory of run logs and step output files. Relative resolves against `home`.
   * @default `$home/logs`
   */
  logDir: text('a directory path').default('logs'),
});

const ServerSchema = section({
  /**
   * Interface the REST API and web UI listen on (host name or IP address).
   * @default `'localhost'`
   */
  host: text('a host name or IP address, e.g. localhost or 0.0.0.0').default('localhost'),
  /**
   * TCP port of the REST API and web UI (1-65535).
   * @default `8080`
   */
  port: listenPortSchema().default(8080),
  /**
   * URL path prefix the app is served under, for a reverse proxy. Normalised: `/` becomes `""`,
   * always one leading slash, no trailing slash.
   * @default `''` (served at the root)
   */
  basePath: z
    .string({ error: 'use a URL path such as /trellis' })
    .overwrite(normalizeBasePath)
    .refine((p) => !/[\s?#\\]/.test(p), {
      error: 'use a URL path such as /trellis, without spaces, "?", "#" or "\\"',
    })
    .default(''),
  /**
   * Serve the REST API only, without the web UI routes.
   * @default `false`
   */
  headless: boolean().default(false),
  /**
   * IANA time zone for schedules and displayed times (`Europe/Berlin`); empty means the
   * process's local zone. Checked with `Intl.DateTimeFormat`.
   * @default `''` (local zone)
   */
  tz: z
    .string({ error: 'use an IANA time zone name such as Europe/Berlin' })
    .refine(isTimeZone, {
      error: 'use an IANA time zone name such as Europe/Berlin or UTC, or "" for the local zone',
    })
    .default(''),
  /**
   * Serve `/metrics` without authentication.
   * @default `true`
   */
  metricsPublic: boolean().default(true),
  /**
   * PEM certificate file (the chain, leaf first): the REST API and web UI are served over HTTPS
   * with it, and reread on SIGHUP without dropping connections. Relative resolves against
   * `home`. Empty means plain HTTP. Set with `tlsKeyFile`.
   * @default `''`
   */
  tlsCertFile: z.string({ error: 'use the path of a PEM certificate file' }).default(''),
  /**
   * PEM private key file of `tlsCertFile`. Relative resolves against `home`.
   * @default `''`
   */
  tlsKeyFile: z.string({ error: 'use the path of a PEM private key file' }).default(''),
}).superRefine((s, ctx) => {
  if ((s.tlsCertFile === '') === (s.tlsKeyFile === '')) return;
  const missing = s.tlsCertFile === '' ? 'tlsCertFile' : 'tlsKeyFile';
  ctx.addIssue({
    code: 'custom',
    path: [missing],
    message: `set both server.tlsCertFile and server.tlsKeyFile for HTTPS (or neither for HTTP): ${missing} is missing`,
  });
});

/** The shape of one `queues` entry as written in the file (before the alias is folded in). */
const queueEntryShape = {
  /** Queue name that DAGs refer to with `queue:`; unique within `queues`. */
  name: text('a queue name, e.g. batch'),
  /** How many runs of this queue may be active at once (at least 1). */
  maxConcurrency: intAtLeast(1, 2).optional(),
  /** @deprecated Old name of `maxConcurrency`; `loadConfig` warns when it is used. */
  maxActiveRuns: intAtLeast(1, 2).optional(),
};

/** One named queue with its own concurrency limit (docs/architecture.md, "The path of a run"). */
export interface QueueConfig {
  /** Queue name that DAGs refer to with `queue:`; unique within `queues`. */
  name: string;
  /** How many runs of this queue may be active at once (at least 1; no default). */
  maxConcurrency: number;
}

const QueueSchema = section(queueEntryShape)
  .superRefine((q, ctx) => {
    if (q.maxConcurrency !== undefined && q.maxActiveRuns !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['maxActiveRuns'],
        message: 'remove maxActiveRuns: it is the deprecated name of maxConcurrency, which is set',
      });
    } else if (q.maxConcurrency === undefined && q.maxActiveRuns === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['maxConcurrency'],
        message: 'give the queue a maxConcurrency, an integer of at least 1',
      });
    }
  })
  // The refinement above guarantees exactly one of the two is set; `1` is never reached.
  .transform((q): QueueConfig => ({
    name: q.name,
    maxConcurrency: q.maxConcurrency ?? q.maxActiveRuns ?? 1,
  }));

const SchedulerSchema = section({
  /**
   * How often the scheduler looks for runs marked running whose process is gone, in seconds;
   * `0` disables the check.
   * @default `45`
   */
  zombieDetectionIntervalSec: intAtLeast(0, 45).default(45),
});

/**
 * Trellis's server config: `$SVC_HOME/config.yaml` merged with `SVC_*` variables and CLI flags by
 * `loadConfig`. Strict: an unknown key is an error. After parsing, `paths.*` are absolute
 * (relative values resolve against `home`) and `server.basePath` is normalised.
 */
export const ConfigSchema = section({
  /**
   * The SVC_HOME directory (absolute): holds `config.yaml` and the default `dags/`, `data/`,
   * `logs/`. Set by `--home` or `SVC_HOME`, not in the file.
   * @default `~/.trellis` (in the user's home directory)
   */
  home: z
    .string({ error: 'use an absolute directory path' })
    .refine((p) => path.isAbsolute(p), { error: 'use an absolute directory path' })
    .default(defaultHome),
  /** Where DAGs, run data and logs live. */
  paths: PathsSchema.prefault({}),
  /** The REST API and web UI server. */
  server: ServerSchema.prefault({}),
  /**
   * Shell that runs step commands that name none. Empty means `$SHELL`, then `sh`.
   * @default `''`
   */
  defaultShell: z.string({ error: 'use a shell path such as /bin/bash' }).default(''),
  /**
   * Redis for distributed mode (BullMQ dispatch, coordinator). Absent means embedded mode: runs
   * execute in-process and nothing but Node is needed.
   * @default absent
   */
  redis: RedisSchema.optional(),
  /**
   * PostgreSQL for runs, queues, leases and logs (docs/ha.md). Absent means the file store under
   * `SVC_HOME` (the embedded default).
   * @default absent
   */
  database: DatabaseSchema.optional(),
  /** The gRPC coordinator that workers heartbeat to (distributed mode). */
  coordinator: CoordinatorSchema.prefault({}),
  /** This process's identity and capacity when it runs as a worker. */
  worker: WorkerSchema.prefault({}),
  /**
   * Named queues with their concurrency limits. Names are unique. `maxActiveRuns` is accepted as
   * a deprecated alias of `maxConcurrency`.
   * @default `[]`
   */
  queues: z
    .array(QueueSchema, { error: 'use a list of queues, e.g. - name: batch' })
    .superRefine((queues, ctx) => checkUniqueNames(queues, ctx, 'queue'))
    .default([]),
  /**
   * How many days finished runs are kept, server-wide; a DAG's own `histRetentionDays` wins.
   * @default `30`
   */
  histRetentionDays: intAtLeast(0, 30).default(30),
  /** The scheduler's housekeeping loops. */
  scheduler: SchedulerSchema.prefault({}),
  /**
   * Who may call the API (spec: Authentication): the mode, users with passwords and tokens, each
   * with a role. Passwords and tokens are kept as SHA-256 digests only.
   * @default `{ mode: 'none', users: [], tokens: [] }`
   */
  auth: AuthSchema.prefault({}),
  /**
   * Other Trellis servers that requests with `remoteNode=<name>` are forwarded to. Names are
   * unique and never `local`.
   * @default `[]`
   */
  remoteNodes: RemoteNodesSchema.default([]),
  /**
   * Completion callbacks: signed POSTs of run events to subscribed URLs, journaled and retried
   * (docs/configuration.md, "Webhooks").
   * @default `{ subscriptions: [] }`
   */
  webhooks: WebhooksSchema.prefault({}),
})
  // Type-preserving: relative paths (the defaults included) become absolute under `home`.
  .overwrite((c) => ({
    ...c,
    paths: {
      dagsDir: path.resolve(c.home, c.paths.dagsDir),
      dataDir: path.resolve(c.home, c.paths.dataDir),
      logDir: path.resolve(c.home, c.paths.logDir),
    },
  }));

/** The parsed, fully defaulted server config. `loadConfig` returns it deeply frozen. */
export type Config = z.infer<typeof ConfigSchema>;

/** Config file input: what `config.yaml` may contain (every field optional). */
export type ConfigInput = z.input<typeof ConfigSchema>;

/**
 * The keys a mapping in the config file accepts, by its path (`queues[0]` -> the queue entry keys), or
 * `undefined` for a path that is not a fixed-shape mapping. Used to suggest fixes for unknown keys.
 */
export const knownKeysAt = (at: readonly PropertyKey[]): readonly string[] | undefined => {
  const key = at.map((s) => (typeof s === 'number' ? '[]' : String(s))).join('.');
  return KNOWN_KEYS[key];
};

const KNOWN_KEYS: Readonly<Record<string, readonly string[]>> = {
  // `home` is left out: it cannot be set in the file.
  '': Object.keys(ConfigSchema.shape).filter((k) => k !== 'home'),
  paths: Object.keys(PathsSchema.shape),
  server: Object.keys(ServerSchema.shape),
  redis: Object.keys(RedisSchema.shape),
  database: Object.keys(DatabaseSchema.shape),
  coordinator: Object.keys(CoordinatorSchema.shape),
  worker: Object.keys(WorkerSchema.shape),
  'queues.[]': Object.keys(queueEntryShape),
  scheduler: Object.keys(SchedulerSchema.shape),
  auth: Object.keys(authShape),
  ...AUTH_SUBKEYS,
  ...REMOTE_NODE_SUBKEYS,
  ...WEBHOOK_SUBKEYS,
};
