import type { RegistryAuth } from '@trellis/spec';

/** Docker's credentials for one registry, as the engine's pull takes them. */
export interface DockerAuth {
  readonly username: string;
  readonly password: string;
  readonly serveraddress: string;
}

/** The registry host of an image reference (`docker.io` when the first part is no host). */
export const registryOf = (image: string): string => {
  const slash = image.indexOf('/');
  if (slash === -1) return 'docker.io';
  const first = image.slice(0, slash);
  return first.includes('.') || first.includes(':') || first === 'localhost' ? first : 'docker.io';
};

const DOCKER_HUB = [
  'docker.io',
  'index.docker.io',
  'registry-1.docker.io',
  'https://index.docker.io/v1/',
];

/** Decodes Docker's `auth` field (base64 `user:password`). */
const decodeAuth = (auth: string): { username: string; password: string } | undefined => {
  const text = Buffer.from(auth, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  return colon === -1
    ? undefined
    : { username: text.slice(0, colon), password: text.slice(colon + 1) };
};

/**
 * Parses `CONTAINER_AUTH_CONFIG` (spec: registryAuths; the peer reads `DOCKER_AUTH_CONFIG`): the
 * JSON of Docker's config.json (`{"auths": {"host": {"auth": "..."}}}`) or the bare map of hosts.
 * Returns a problem sentence for text that is not such JSON.
 */
export const parseAuthConfig = (
  text: string | undefined,
): { auths: Record<string, RegistryAuth> } | { problem: string } => {
  if (text === undefined || text.trim() === '') return { auths: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return {
      problem: `CONTAINER_AUTH_CONFIG is not JSON (${(e as Error).message}): use Docker's config.json form {"auths": {"registry": {"auth": "<base64 user:password>"}}}`,
    };
  }
  const root = (parsed as { auths?: unknown }).auths ?? parsed;
  if (typeof root !== 'object' || root === null || Array.isArray(root))
    return {
      problem: 'CONTAINER_AUTH_CONFIG must map registry hosts to {username, password} or {auth}',
    };
  const out: Record<string, RegistryAuth> = {};
  for (const [host, v] of Object.entries(root as Record<string, unknown>)) {
    if (typeof v !== 'object' || v === null) continue;
    const e = v as Record<string, unknown>;
    out[host] = {
      ...(typeof e.username === 'string' ? { username: e.username } : {}),
      ...(typeof e.password === 'string' ? { password: e.password } : {}),
      ...(typeof e.auth === 'string' ? { auth: e.auth } : {}),
    };
  }
  return { auths: out };
};

/**
 * The credentials for pulling `image`: the DAG's `registryAuths` first, then the ones from
 * `CONTAINER_AUTH_CONFIG`; entries are matched by registry host (Docker Hub under any of its
 * names). `undefined` = pull anonymously.
 */
export const authFor = (
  image: string,
  sources: readonly Readonly<Record<string, RegistryAuth>>[],
): DockerAuth | undefined => {
  const registry = registryOf(image);
  const names = DOCKER_HUB.includes(registry) ? DOCKER_HUB : [registry];
  for (const source of sources) {
    for (const [host, entry] of Object.entries(source)) {
      const bare = host.replace(/^https?:\/\//, '').replace(/\/.*$/, '');
      if (!names.includes(host) && !names.includes(bare)) continue;
      const decoded = entry.auth !== undefined ? decodeAuth(entry.auth) : undefined;
      const username = entry.username ?? decoded?.username;
      const password = entry.password ?? decoded?.password;
      if (username === undefined) continue;
      return { username, password: password ?? '', serveraddress: registry };
    }
  }
  return undefined;
};
