/*
 * The server config (docs/architecture.md, "House style"): one schema, one loader, one reader of process.env.
 * `export *` (each of those files exports exactly these names) for the error, the loader and the
 * env reader: a bundler that splits code (scripts/lib/bundle-cli.mjs) then keeps the loader, its
 * zod schema and js-yaml out of what `trellis --help` loads, which a named re-export here would
 * pull in with the error class the CLI needs at once.
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
export * from './config-error.js';
export { FLAG_MAP, type ConfigFlags, type FlagBinding } from './config-flags.js';
export { ENV_MAP, type EnvBinding, type EnvName } from './env-map.js';
export * from './load-config.js';
export { parseLabels, type ParsedLabels, type SettingKind } from './parse-setting.js';
export * from './process-env.js';
