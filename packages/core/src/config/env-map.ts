import type { SettingKind } from './parse-setting.js';

/** One `SVC_*` environment variable and the config field it sets. */
export interface EnvBinding {
  /** The variable's name. */
  readonly name: `SVC_${string}`;
  /**
   * Dotted config path it sets (`server.port`), or `null` for `SVC_CONFIG`, which chooses the
   * config file instead of setting a field.
   */
  readonly path: string | null;
  /** How its text is converted (see {@link SettingKind}). */
  readonly kind: SettingKind;
  /** One line for the docs. */
  readonly description: string;
}

/**
 * Every environment variable Trellis reads, mapped explicitly (docs/architecture.md, "House style": greppable, no
 * naming convention). Env beats the config file; CLI flags beat env. An empty value counts as
 * unset. Relative paths resolve against the working directory.
 */
export const ENV_MAP = [
  {
    name: 'SVC_HOME',
    path: 'home',
    kind: 'path',
    description: 'Home directory holding config.yaml, dags/, data/ and logs/ (default ~/.trellis).',
  },
  {
    name: 'SVC_CONFIG',
    path: null,
    kind: 'path',
    description: 'Config file to read instead of $SVC_HOME/config.yaml; it must exist.',
  },
  {
    name: 'SVC_DAGS_DIR',
    path: 'paths.dagsDir',
    kind: 'path',
    description: 'Directory of DAG files (default $SVC_HOME/dags).',
  },
  {
    name: 'SVC_DATA_DIR',
    path: 'paths.dataDir',
    kind: 'path',
    description: 'Directory of run history, queues and suspend flags (default $SVC_HOME/data).',
  },
  {
    name: 'SVC_LOG_DIR',
    path: 'paths.logDir',
    kind: 'path',
    description: 'Directory of run and step logs (default $SVC_HOME/logs).',
  },
  {
    name: 'SVC_HOST',
    path: 'server.host',
    kind: 'string',
    description: 'Interface the REST API and web UI listen on (default localhost).',
  },
  {
    name: 'SVC_PORT',
    path: 'server.port',
    kind: 'listenPort',
    description: 'Port of the REST API and web UI, 1-65535, or 0 for any free port (default 8080).',
  },
  {
    name: 'SVC_BASE_PATH',
    path: 'server.basePath',
    kind: 'string',
    description: 'URL path prefix behind a reverse proxy, e.g. /trellis (default none).',
  },
  {
    name: 'SVC_HEADLESS',
    path: 'server.headless',
    kind: 'bool',
    description: 'true to serve the API without the web UI (default false).',
  },
  {
    name: 'SVC_TZ',
    path: 'server.tz',
    kind: 'string',
    description: 'IANA time zone for schedules and display, e.g. Europe/Berlin (default local).',
  },
  {
    name: 'SVC_METRICS_PUBLIC',
    path: 'server.metricsPublic',
    kind: 'bool',
    description: 'false to require authentication on /metrics (default true).',
  },
  {
    name: 'SVC_TLS_CERT_FILE',
    path: 'server.tlsCertFile',
    kind: 'path',
    description:
      'PEM certificate file: serve the API and web UI over HTTPS (with SVC_TLS_KEY_FILE).',
  },
  {
    name: 'SVC_TLS_KEY_FILE',
    path: 'server.tlsKeyFile',
    kind: 'path',
    description: 'PEM private key file of SVC_TLS_CERT_FILE.',
  },
  {
    name: 'SVC_DEFAULT_SHELL',
    path: 'defaultShell',
    kind: 'string',
    description: 'Shell for step commands (default $SHELL, then sh).',
  },
  {
    name: 'SVC_REDIS_URL',
    path: 'redis.url',
    kind: 'string',
    description: 'redis:// URL; setting it turns on distributed mode (default unset: embedded).',
  },
  {
    name: 'SVC_DATABASE_URL',
    path: 'database.url',
    kind: 'string',
    description:
      'postgres:// URL; setting it stores runs, queues and logs in PostgreSQL (default unset: files).',
  },
  {
    name: 'SVC_DATABASE_POOL_SIZE',
    path: 'database.poolSize',
    kind: 'int',
    description: 'Connections each process keeps to PostgreSQL at most, at least 1 (default 10).',
  },
  {
    name: 'SVC_DATABASE_LEASE_TTL_MS',
    path: 'database.leaseTtlMs',
    kind: 'int',
    description:
      'Leader lease of replicated coordinators without renewal, ms, at least 500 (default 3000).',
  },
  {
    name: 'SVC_DATABASE_LEASE_RENEW_MS',
    path: 'database.leaseRenewMs',
    kind: 'int',
    description: 'How often the leader renews its lease, ms, at least 100 (default 1000).',
  },
  {
    name: 'SVC_COORDINATOR_HOST',
    path: 'coordinator.host',
    kind: 'string',
    description: 'Interface the gRPC coordinator listens on (default 127.0.0.1).',
  },
  {
    name: 'SVC_COORDINATOR_PORT',
    path: 'coordinator.port',
    kind: 'port',
    description: 'Port of the gRPC coordinator, 1-65535 (default 50055).',
  },
  {
    name: 'SVC_COORDINATOR_ADVERTISE',
    path: 'coordinator.advertise',
    kind: 'string',
    description: 'host:port workers dial to reach the coordinator (default host:port).',
  },
  {
    name: 'SVC_COORDINATOR_TLS_CERT_FILE',
    path: 'coordinator.tlsCertFile',
    kind: 'path',
    description: 'PEM certificate the coordinator serves TLS with (default none: plain gRPC).',
  },
  {
    name: 'SVC_COORDINATOR_TLS_KEY_FILE',
    path: 'coordinator.tlsKeyFile',
    kind: 'path',
    description: 'PEM private key of the coordinator certificate (default none).',
  },
  {
    name: 'SVC_COORDINATOR_TLS_CA_FILE',
    path: 'coordinator.tlsCaFile',
    kind: 'path',
    description:
      'PEM CA bundle the coordinator checks worker client certificates with: mutual TLS (default none).',
  },
  {
    name: 'SVC_COORDINATOR_TOKENS',
    path: 'coordinator.tokens',
    kind: 'list',
    description:
      'Worker tokens the coordinator accepts, comma-separated; two rotate one (default none).',
  },
  {
    name: 'SVC_COORDINATOR_INSECURE',
    path: 'coordinator.insecure',
    kind: 'bool',
    description:
      'true lets the coordinator listen beyond loopback without TLS or tokens (default false).',
  },
  {
    name: 'SVC_WORKER_ID',
    path: 'worker.id',
    kind: 'string',
    description: 'Worker id in heartbeats and GET /workers (default hostname@pid).',
  },
  {
    name: 'SVC_WORKER_LABELS',
    path: 'worker.labels',
    kind: 'labels',
    description: 'Worker labels as k=v,k2=v2, matched by workerSelector (default none).',
  },
  {
    name: 'SVC_WORKER_CONCURRENCY',
    path: 'worker.concurrency',
    kind: 'int',
    description: 'Runs a worker executes at once, at least 1 (default 4).',
  },
  {
    name: 'SVC_WORKER_OUTBOX_MAX_BYTES',
    path: 'worker.outboxMaxBytes',
    kind: 'int',
    description:
      'Bytes of undelivered status and logs a worker keeps before step output waits, at least 65536 (default 64 MiB).',
  },
  {
    name: 'SVC_WORKER_COORDINATORS',
    path: 'worker.coordinators',
    kind: 'list',
    description:
      'Coordinators a worker registers with, host:port comma-separated; it moves to the next when one is lost (default coordinator.advertise).',
  },
  {
    name: 'SVC_WORKER_TOKEN',
    path: 'worker.token',
    kind: 'string',
    description: 'Token the worker sends the coordinator (one of its tokens; default none).',
  },
  {
    name: 'SVC_WORKER_TLS_CERT_FILE',
    path: 'worker.tlsCertFile',
    kind: 'path',
    description: 'PEM client certificate of the worker for mutual TLS (default none).',
  },
  {
    name: 'SVC_WORKER_TLS_KEY_FILE',
    path: 'worker.tlsKeyFile',
    kind: 'path',
    description: 'PEM private key of the worker client certificate (default none).',
  },
  {
    name: 'SVC_WORKER_TLS_CA_FILE',
    path: 'worker.tlsCaFile',
    kind: 'path',
    description:
      'PEM CA bundle the worker checks the coordinator with; set, it dials TLS (default none).',
  },
  {
    name: 'SVC_HIST_RETENTION_DAYS',
    path: 'histRetentionDays',
    kind: 'int',
    description: 'Days finished runs are kept, unless a DAG sets its own (default 30).',
  },
  {
    name: 'SVC_ZOMBIE_DETECTION_INTERVAL_SEC',
    path: 'scheduler.zombieDetectionIntervalSec',
    kind: 'int',
    description: 'Seconds between checks for runs whose process died; 0 disables (default 45).',
  },
  {
    name: 'SVC_AUTH_MODE',
    path: 'auth.mode',
    kind: 'string',
    description:
      'none, basic or bearer: the 401 challenge (default basic with users, bearer with tokens, else none).',
  },
  {
    name: 'SVC_AUTH_BASIC_USERNAME',
    path: 'auth.basic.username',
    kind: 'string',
    description:
      'Adds one admin user for HTTP Basic with this name (with SVC_AUTH_BASIC_PASSWORD).',
  },
  {
    name: 'SVC_AUTH_BASIC_PASSWORD',
    path: 'auth.basic.password',
    kind: 'string',
    description: 'Password of the SVC_AUTH_BASIC_USERNAME user.',
  },
  {
    name: 'SVC_AUTH_TOKEN',
    path: 'auth.token',
    kind: 'string',
    description: 'Adds one admin Bearer token, named auth.token.',
  },
] as const satisfies readonly EnvBinding[];

/** The name of a variable in {@link ENV_MAP}. */
export type EnvName = (typeof ENV_MAP)[number]['name'];
