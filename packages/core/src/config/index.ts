/*
 * The server config (docs/architecture.md, "House style"): one schema, one loader, one reader of process.env.
 */
export {
  ConfigSchema,
  isTimeZone,
  normalizeBasePath,
  type Config,
  type ConfigInput,
  type QueueConfig,
} from './config.schema.js';
export {
  AUTH_MODES,
  ROLES,
  SHORTHAND_TOKEN_NAME,
  sha256Hex,
  type AuthConfig,
  type AuthMode,
  type AuthTokenConfig,
  type AuthUserConfig,
  type OidcConfig,
  type Role,
} from './auth.schema.js';
export type { RemoteNodeAuth, RemoteNodeConfig } from './remote-nodes.schema.js';
export { WEBHOOK_EVENT_NAMES } from './webhooks.schema.js';
export { ConfigError } from './config-error.js';
export { FLAG_MAP, type ConfigFlags, type FlagBinding } from './config-flags.js';
export { ENV_MAP, type EnvBinding, type EnvName } from './env-map.js';
export { loadConfig, type LoadConfigOptions, type LoadedConfig } from './load-config.js';
export { parseLabels, type ParsedLabels, type SettingKind } from './parse-setting.js';
export { readProcessEnv } from './process-env.js';
