import type { SettingKind } from './parse-setting.js';

/**
 * CLI flags that override config, as the CLI parser produced them. Flags beat `SVC_*` variables
 * and the config file. `undefined` means "not given". Numbers and booleans may arrive as text
 * (`"8080"`, `"true"`) and are checked like env values. Relative paths resolve against the
 * working directory.
 */
export interface ConfigFlags {
  /** `--home`: the SVC_HOME directory. */
  home?: string | undefined;
  /** `--config`: config file to read instead of `$home/config.yaml`; it must exist. */
  config?: string | undefined;
  /** `--dags`: `paths.dagsDir`. */
  dags?: string | undefined;
  /** `--data-dir`: `paths.dataDir`. */
  dataDir?: string | undefined;
  /** `--log-dir`: `paths.logDir`. */
  logDir?: string | undefined;
  /** `--host`: `server.host`. */
  host?: string | undefined;
  /** `--port`: `server.port`, 1-65535. */
  port?: number | string | undefined;
  /** `--base-path`: `server.basePath`. */
  basePath?: string | undefined;
  /** `--headless`: `server.headless`. */
  headless?: boolean | string | undefined;
  /** `--tz`: `server.tz`. */
  tz?: string | undefined;
  /** `--default-shell`: `defaultShell`. */
  defaultShell?: string | undefined;
  /** `--redis-url`: `redis.url`; turns on distributed mode. */
  redisUrl?: string | undefined;
  /** `--coordinator-host`: `coordinator.host`. */
  coordinatorHost?: string | undefined;
  /** `--coordinator-port`: `coordinator.port`, 1-65535. */
  coordinatorPort?: number | string | undefined;
  /** `--coordinator-advertise`: `coordinator.advertise`. */
  coordinatorAdvertise?: string | undefined;
  /** `--insecure`: `coordinator.insecure` (listen beyond loopback without TLS or tokens). */
  insecure?: boolean | string | undefined;
  /** `--worker-id`: `worker.id`. */
  workerId?: string | undefined;
  /** `--labels`: `worker.labels`, as `k=v,k2=v2` or already split. Replaces file/env labels. */
  labels?: string | Readonly<Record<string, string>> | undefined;
  /** `--concurrency`: `worker.concurrency`, at least 1. */
  concurrency?: number | string | undefined;
}

/** One CLI flag and the config field it sets. */
export interface FlagBinding {
  /** The flag as the user types it, for messages (`--port`). */
  readonly option: `--${string}`;
  /** Dotted config path it sets, or `null` for `--config`, which chooses the file. */
  readonly path: string | null;
  /** How its value is converted. */
  readonly kind: SettingKind;
}

/**
 * Every config flag, keyed by its {@link ConfigFlags} property. The `satisfies` clause makes a
 * flag added to `ConfigFlags` without a binding a compile error.
 */
export const FLAG_MAP = {
  home: { option: '--home', path: 'home', kind: 'path' },
  config: { option: '--config', path: null, kind: 'path' },
  dags: { option: '--dags', path: 'paths.dagsDir', kind: 'path' },
  dataDir: { option: '--data-dir', path: 'paths.dataDir', kind: 'path' },
  logDir: { option: '--log-dir', path: 'paths.logDir', kind: 'path' },
  host: { option: '--host', path: 'server.host', kind: 'string' },
  port: { option: '--port', path: 'server.port', kind: 'listenPort' },
  basePath: { option: '--base-path', path: 'server.basePath', kind: 'string' },
  headless: { option: '--headless', path: 'server.headless', kind: 'bool' },
  tz: { option: '--tz', path: 'server.tz', kind: 'string' },
  defaultShell: { option: '--default-shell', path: 'defaultShell', kind: 'string' },
  redisUrl: { option: '--redis-url', path: 'redis.url', kind: 'string' },
  coordinatorHost: { option: '--coordinator-host', path: 'coordinator.host', kind: 'string' },
  coordinatorPort: { option: '--coordinator-port', path: 'coordinator.port', kind: 'port' },
  coordinatorAdvertise: {
    option: '--coordinator-advertise',
    path: 'coordinator.advertise',
    kind: 'string',
  },
  insecure: { option: '--insecure', path: 'coordinator.insecure', kind: 'bool' },
  workerId: { option: '--worker-id', path: 'worker.id', kind: 'string' },
  labels: { option: '--labels', path: 'worker.labels', kind: 'labels' },
  concurrency: { option: '--concurrency', path: 'worker.concurrency', kind: 'int' },
} as const satisfies Record<keyof ConfigFlags, FlagBinding>;
