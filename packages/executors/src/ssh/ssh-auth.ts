import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expandHome } from '@trellis/core';
import ssh2, { type PasswordAuthMethod, type PublicKeyAuthMethod } from 'ssh2';

// ssh2 is CommonJS: Node's ESM loader exposes `utils` only on the default export.
const { utils } = ssh2;

/** spec: SSH settings, `key` default: the standard keys, tried in this order. */
export const DEFAULT_KEYS = ['id_rsa', 'id_ecdsa', 'id_ed25519', 'id_dsa'] as const;

/** One authentication attempt for ssh2's `authHandler`. */
export type AuthMethod =
  | { type: 'publickey'; username: string; key: Buffer; path: string }
  | { type: 'password'; username: string; password: string };

/**
 * The methods to try, keys first (spec: "key auth preferred"): the configured key, or each
 * standard key that exists; then the password. A configured key that is missing or unreadable
 * is a problem; a standard key that cannot be parsed is skipped.
 */
export const authMethods = async (
  cfg: { user: string; key?: string; password?: string },
  home: string,
): Promise<AuthMethod[] | { problem: string }> => {
  const methods: AuthMethod[] = [];
  if (cfg.key !== undefined && cfg.key !== '') {
    const path = expandHome(cfg.key, home);
    let key: Buffer;
    try {
      key = await readFile(path);
    } catch (e) {
      return {
        problem: `cannot read the ssh key ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      };
    }
    const parsed = utils.parseKey(key);
    if (parsed instanceof Error)
      return {
        problem: `the ssh key ${path} is not a usable private key (${parsed.message}); use an unencrypted OpenSSH or PEM private key`,
      };
    methods.push({ type: 'publickey', username: cfg.user, key, path });
  } else {
    for (const name of DEFAULT_KEYS) {
      const path = join(home, '.ssh', name);
      const key = await readFile(path).catch(() => undefined);
      if (key && !(utils.parseKey(key) instanceof Error))
        methods.push({ type: 'publickey', username: cfg.user, key, path });
    }
  }
  if (cfg.password !== undefined && cfg.password !== '')
    methods.push({ type: 'password', username: cfg.user, password: cfg.password });
  if (methods.length === 0)
    return {
      problem: `no ssh credentials for ${cfg.user}: set key or password (no usable key in ${DEFAULT_KEYS.map((k) => `~/.ssh/${k}`).join(', ')})`,
    };
  return methods;
};

/** Converts to ssh2's `authHandler` entries. */
export const toAuthHandler = (
  methods: readonly AuthMethod[],
): (PublicKeyAuthMethod | PasswordAuthMethod)[] =>
  methods.map((m) =>
    m.type === 'publickey'
      ? { type: 'publickey' as const, username: m.username, key: m.key }
      : { type: 'password' as const, username: m.username, password: m.password },
  );
