import type { YamlPath } from '../yaml/problem.js';
import type {
  ContainerSpec,
  MailSpec,
  OtelSpec,
  RegistryAuth,
  SmtpSpec,
  SshSpec,
} from '../model/dag.js';
import {
  checkKeys,
  checkRegex,
  isRecord,
  readBool,
  readEnum,
  readMap,
  readString,
  readStringList,
  readStringMap,
  show,
  type Ctx,
} from './context.js';
import { readEnvEntries } from './env.js';

export const SSH_KEYS = [
  'user',
  'host',
  'port',
  'key',
  'password',
  'strictHostKey',
  'knownHostFile',
] as const;

/** SSH settings, shared by the DAG-level `ssh` and the ssh executor's config. */
export const readSsh = (
  ctx: Ctx,
  v: unknown,
  path: YamlPath,
  what: string,
): SshSpec | undefined => {
  const m = readMap(ctx, v, path, what);
  if (!m) return undefined;
  checkKeys(ctx, m, path, SSH_KEYS, what);
  const user = readString(ctx, m.user, [...path, 'user']);
  const host = readString(ctx, m.host, [...path, 'host']);
  if (!host) ctx.report(path, `${what} needs host: the machine to connect to`);
  if (!user) ctx.report(path, `${what} needs user: the account to log in as`);
  const port = readString(ctx, m.port, [...path, 'port']) ?? '22';
  if (!/^\d+$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
    if (!port.includes('$'))
      ctx.report([...path, 'port'], `must be a port number from 1 to 65535, got ${show(m.port)}`);
  }
  const key = readString(ctx, m.key, [...path, 'key']);
  const password = readString(ctx, m.password, [...path, 'password']);
  return {
    user: user ?? '',
    host: host ?? '',
    port,
    ...(key !== undefined ? { key } : {}),
    ...(password !== undefined ? { password } : {}),
    strictHostKey: readBool(ctx, m.strictHostKey, [...path, 'strictHostKey']) ?? true,
    knownHostFile:
      readString(ctx, m.knownHostFile, [...path, 'knownHostFile']) ?? '~/.ssh/known_hosts',
  };
};

const CONTAINER_KEYS = [
  'image',
  'pullPolicy',
  'env',
  'volumes',
  'workingDir',
  'platform',
  'user',
  'ports',
  'network',
  'startup',
  'command',
  'waitFor',
  'logPattern',
  'restartPolicy',
  'keepContainer',
] as const;

/** `pull` / `pullPolicy`: the three names, with booleans accepted (true = always, false = never). */
export const readPullPolicy = (
  ctx: Ctx,
  v: unknown,
  path: YamlPath,
): 'always' | 'missing' | 'never' => {
  if (v === true) return 'always';
  if (v === false) return 'never';
  return readEnum(ctx, v, path, ['always', 'missing', 'never'] as const) ?? 'missing';
};

/** The DAG-level `container` (spec: "Container (DAG level)"). */
export const readContainer = (ctx: Ctx, v: unknown, path: YamlPath): ContainerSpec | undefined => {
  const m = readMap(ctx, v, path, 'container');
  if (!m) return undefined;
  checkKeys(ctx, m, path, CONTAINER_KEYS, 'container');
  const image = readString(ctx, m.image, [...path, 'image']);
  if (!image) ctx.report(path, 'container needs image: the image every step runs in');
  const startup =
    readEnum(ctx, m.startup, [...path, 'startup'], [
      'keepalive',
      'entrypoint',
      'command',
    ] as const) ?? 'keepalive';
  const command = readStringList(ctx, m.command, [...path, 'command']) ?? [];
  if (startup === 'command' && command.length === 0)
    ctx.report(path, 'startup: command needs command: the process that keeps the container alive');
  const logPattern = readString(ctx, m.logPattern, [...path, 'logPattern']);
  if (logPattern !== undefined) checkRegex(ctx, logPattern, [...path, 'logPattern']);
  const workingDir = readString(ctx, m.workingDir, [...path, 'workingDir']);
  const platform = readString(ctx, m.platform, [...path, 'platform']);
  const user = readString(ctx, m.user, [...path, 'user']);
  const network = readString(ctx, m.network, [...path, 'network']);
  return {
    image: image ?? '',
    pullPolicy: readPullPolicy(ctx, m.pullPolicy, [...path, 'pullPolicy']),
    env: readEnvEntries(ctx, m.env, [...path, 'env']),
    volumes: readStringList(ctx, m.volumes, [...path, 'volumes']) ?? [],
    ...(workingDir !== undefined ? { workingDir } : {}),
    ...(platform !== undefined ? { platform } : {}),
    ...(user !== undefined ? { user } : {}),
    ports: readStringList(ctx, m.ports, [...path, 'ports']) ?? [],
    ...(network !== undefined ? { network } : {}),
    startup,
    command,
    waitFor:
      readEnum(ctx, m.waitFor, [...path, 'waitFor'], ['running', 'healthy'] as const) ?? 'running',
    ...(logPattern !== undefined ? { logPattern } : {}),
    restartPolicy:
      readEnum(ctx, m.restartPolicy, [...path, 'restartPolicy'], [
        'no',
        'always',
        'unless-stopped',
      ] as const) ?? 'no',
    keepContainer: readBool(ctx, m.keepContainer, [...path, 'keepContainer']) ?? false,
  };
};

/** `otel`: tracing settings; `timeout` in seconds or as a duration such as `30s`. */
export const readOtel = (ctx: Ctx, v: unknown, path: YamlPath): OtelSpec | undefined => {
  const m = readMap(ctx, v, path, 'otel');
  if (!m) return undefined;
  checkKeys(
    ctx,
    m,
    path,
    ['enabled', 'endpoint', 'headers', 'insecure', 'timeout', 'resource'],
    'otel',
  );
  const enabled = readBool(ctx, m.enabled, [...path, 'enabled']) ?? false;
  const endpoint = readString(ctx, m.endpoint, [...path, 'endpoint']);
  if (enabled && !endpoint)
    ctx.report(path, 'otel is enabled but has no endpoint: set the OTLP collector URL');
  return {
    enabled,
    ...(endpoint !== undefined ? { endpoint } : {}),
    headers: readStringMap(ctx, m.headers, [...path, 'headers'], 'otel.headers') ?? {},
    insecure: readBool(ctx, m.insecure, [...path, 'insecure']) ?? false,
    timeoutSec: readDurationSec(ctx, m.timeout, [...path, 'timeout']) ?? 10,
    resource: readStringMap(ctx, m.resource, [...path, 'resource'], 'otel.resource') ?? {},
  };
};

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/;
const UNIT_SEC: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600 };

/** Seconds from an integer, or from a duration such as `500ms`, `30s`, `5m`, `1h`. */
export const readDurationSec = (ctx: Ctx, v: unknown, path: YamlPath): number | undefined => {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number' && v >= 0) return v;
  const m = typeof v === 'string' ? DURATION.exec(v.trim()) : null;
  if (m) return Number(m[1]) * (UNIT_SEC[m[2] ?? 's'] ?? 1);
  ctx.report(path, `must be seconds or a duration such as "30s" or "5m", got ${show(v)}`);
  return undefined;
};

/** `errorMail` / `infoMail`. */
export const readMail = (
  ctx: Ctx,
  v: unknown,
  path: YamlPath,
  what: string,
): MailSpec | undefined => {
  const m = readMap(ctx, v, path, what);
  if (!m) return undefined;
  checkKeys(ctx, m, path, ['from', 'to', 'prefix', 'attachLogs'], what);
  const to = readStringList(ctx, m.to, [...path, 'to']) ?? [];
  if (to.length === 0) ctx.report(path, `${what} needs to: one address or a list`);
  return {
    from: readString(ctx, m.from, [...path, 'from']) ?? '',
    to,
    prefix: readString(ctx, m.prefix, [...path, 'prefix']) ?? '',
    attachLogs: readBool(ctx, m.attachLogs, [...path, 'attachLogs']) ?? false,
  };
};

/** `smtp`. */
export const readSmtp = (ctx: Ctx, v: unknown, path: YamlPath): SmtpSpec | undefined => {
  const m = readMap(ctx, v, path, 'smtp');
  if (!m) return undefined;
  checkKeys(ctx, m, path, ['host', 'port', 'username', 'password'], 'smtp');
  const host = readString(ctx, m.host, [...path, 'host']);
  if (!host) ctx.report(path, 'smtp needs host: the mail server');
  const username = readString(ctx, m.username, [...path, 'username']);
  const password = readString(ctx, m.password, [...path, 'password']);
  return {
    host: host ?? '',
    port: readString(ctx, m.port, [...path, 'port']) ?? '25',
    ...(username !== undefined ? { username } : {}),
    ...(password !== undefined ? { password } : {}),
  };
};

/** `registryAuths`: registry host -> `{username, password}` or `{auth}`. */
export const readRegistryAuths = (
  ctx: Ctx,
  v: unknown,
  path: YamlPath,
): Record<string, RegistryAuth> => {
  const m = readMap(ctx, v, path, 'registryAuths');
  if (!m) return {};
  const out: Record<string, RegistryAuth> = {};
  for (const [host, entry] of Object.entries(m)) {
    const at = [...path, host];
    if (!isRecord(entry)) {
      ctx.report(at, `must be a mapping with username and password (or auth), got ${show(entry)}`);
      continue;
    }
    checkKeys(ctx, entry, at, ['username', 'password', 'auth'], `registryAuths.${host}`);
    const username = readString(ctx, entry.username, [...at, 'username']);
    const password = readString(ctx, entry.password, [...at, 'password']);
    const auth = readString(ctx, entry.auth, [...at, 'auth']);
    if (auth === undefined && username === undefined)
      ctx.report(at, 'set username and password, or auth');
    out[host] = {
      ...(username !== undefined ? { username } : {}),
      ...(password !== undefined ? { password } : {}),
      ...(auth !== undefined ? { auth } : {}),
    };
  }
  return out;
};
