import { isAbsolute, resolve } from 'node:path';
import { expandHome } from '@trellis/core';
import type Dockerode from 'dockerode';

/** The docker executor's config as the spec package compiles it (spec: Executors). */
export interface DockerStepConfig {
  readonly image?: string;
  readonly containerName?: string;
  /** @default 'missing' */
  readonly pull: 'always' | 'missing' | 'never';
  /** Remove the container after the step. @default true */
  readonly autoRemove: boolean;
  readonly platform?: string;
  /** `env`, `workingDir`, `exposedPorts`, `user`, `entrypoint`, `cmd`, `labels`, Docker API fields. */
  readonly container?: Readonly<Record<string, unknown>>;
  /** `binds`, `portBindings`, `networkMode`, `autoRemove`, `privileged`, Docker API fields. */
  readonly host?: Readonly<Record<string, unknown>>;
  /** `endpointsConfig` (network -> `{aliases}`), or `aliases` for the host's network mode. */
  readonly network?: Readonly<Record<string, unknown>>;
  /** `user`, `workingDir`, `env` of an exec into a running container. */
  readonly exec?: {
    readonly user?: string;
    readonly workingDir?: string;
    readonly env?: readonly string[];
  };
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Keys the spec writes in camelCase, by their Docker Engine API name. */
const CONTAINER_KEYS: Record<string, string> = {
  env: 'Env',
  workingDir: 'WorkingDir',
  exposedPorts: 'ExposedPorts',
  user: 'User',
  entrypoint: 'Entrypoint',
  cmd: 'Cmd',
  labels: 'Labels',
};
const HOST_KEYS: Record<string, string> = {
  binds: 'Binds',
  portBindings: 'PortBindings',
  networkMode: 'NetworkMode',
  autoRemove: 'AutoRemove',
  privileged: 'Privileged',
};

/** Renames the spec's camelCase keys; Docker API keys (capitalised) pass through. */
const rename = (
  m: Readonly<Record<string, unknown>> | undefined,
  names: Record<string, string>,
) => {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(m ?? {})) out[names[k] ?? k] = v;
  return out;
};

/** `["80/tcp"]` or `{"80/tcp": {}}` -> the API's map; a bare port means tcp. */
const exposedPorts = (v: unknown): Record<string, object> | undefined => {
  if (v === undefined) return undefined;
  const keys = Array.isArray(v) ? v.map(String) : isRecord(v) ? Object.keys(v) : [];
  return Object.fromEntries(keys.map((k) => [k.includes('/') ? k : `${k}/tcp`, {}]));
};

/** `{"80/tcp": [{hostPort: "8080"}]}` (or `"8080"`) -> the API's `PortBindings`. */
const portBindings = (v: unknown): Record<string, { HostIp?: string; HostPort: string }[]> => {
  const out: Record<string, { HostIp?: string; HostPort: string }[]> = {};
  if (!isRecord(v)) return out;
  for (const [port, binding] of Object.entries(v)) {
    const list = Array.isArray(binding) ? binding : [binding];
    out[port.includes('/') ? port : `${port}/tcp`] = list.map((b) => {
      if (!isRecord(b)) return { HostPort: String(b) };
      const ip = b.HostIp ?? b.hostIp;
      const hostPort = b.HostPort ?? b.hostPort;
      return {
        ...(typeof ip === 'string' ? { HostIp: ip } : {}),
        HostPort:
          typeof hostPort === 'string' || typeof hostPort === 'number' ? String(hostPort) : '',
      };
    });
  }
  return out;
};

/**
 * `host:container[:mode]` with a relative host path resolved against `base`, and a leading `~` of
 * the host path expanded to `home`.
 */
export const resolveBind = (bind: string, base: string, home: string): string => {
  const [written = '', ...rest] = bind.split(':');
  if (rest.length === 0) return bind; // an anonymous volume: container path only
  const host = expandHome(written, home);
  const named = !host.startsWith('.') && !host.includes('/') && host !== '~';
  if (named) return bind; // a named volume
  return [isAbsolute(host) ? host : resolve(base, host), ...rest].join(':');
};

/** `endpointsConfig` / `aliases` -> the API's `NetworkingConfig`. */
const networking = (
  v: Readonly<Record<string, unknown>> | undefined,
  networkMode: unknown,
): Dockerode.ContainerCreateOptions['NetworkingConfig'] | undefined => {
  if (!v) return undefined;
  const endpoints: Record<string, Record<string, unknown>> = {};
  const given = v.EndpointsConfig ?? v.endpointsConfig;
  if (isRecord(given))
    for (const [net, cfg] of Object.entries(given))
      endpoints[net] = rename(isRecord(cfg) ? cfg : {}, {
        aliases: 'Aliases',
        ipamConfig: 'IPAMConfig',
      });
  if (Array.isArray(v.aliases)) {
    const net = typeof networkMode === 'string' && networkMode !== '' ? networkMode : 'bridge';
    endpoints[net] = { ...endpoints[net], Aliases: v.aliases };
  }
  return { EndpointsConfig: endpoints };
};

/**
 * The create options of a step's own container: image, command (none = the image's default
 * entrypoint and command), the `container`/`host`/`network` config, environment and platform.
 */
export const createOptionsFor = (
  c: DockerStepConfig,
  o: {
    image: string;
    cmd: string[] | undefined;
    env: string[];
    name?: string;
    cwd: string;
    /** The step's home directory, for `~` in bind paths. */
    home: string;
  },
): Dockerode.ContainerCreateOptions => {
  const container = rename(c.container, CONTAINER_KEYS);
  const host = rename(c.host, HOST_KEYS);
  const ports = exposedPorts(container.ExposedPorts);
  const bindings = host.PortBindings !== undefined ? portBindings(host.PortBindings) : undefined;
  const binds = Array.isArray(host.Binds)
    ? host.Binds.map((b) => resolveBind(String(b), o.cwd, o.home))
    : undefined;
  const net = networking(c.network, host.NetworkMode);
  // The container is removed by the executor after it read the exit code and the output.
  delete host.AutoRemove;
  return {
    ...container,
    Image: o.image,
    ...(o.name ? { name: o.name } : {}),
    ...(o.cmd ? { Cmd: o.cmd } : {}),
    Env: [...o.env, ...(Array.isArray(container.Env) ? container.Env.map(String) : [])],
    ...(ports || bindings
      ? {
          ExposedPorts: {
            ...ports,
            ...Object.fromEntries(Object.keys(bindings ?? {}).map((k) => [k, {}])),
          },
        }
      : {}),
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
    HostConfig: {
      ...host,
      ...(binds ? { Binds: binds } : {}),
      ...(bindings ? { PortBindings: bindings } : {}),
    },
    ...(net ? { NetworkingConfig: net } : {}),
    ...(c.platform ? { platform: c.platform } : {}),
  };
};
