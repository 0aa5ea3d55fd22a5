import { createHmac } from 'node:crypto';

/** One usable line of a known_hosts file. */
export interface KnownHost {
  /** Host patterns as written: `host`, `[host]:port`, or a hashed `|1|salt|hash`. */
  readonly patterns: readonly string[];
  readonly keyType: string;
  /** The key in SSH wire format (the base64 field decoded). */
  readonly key: Buffer;
}

/** Parses known_hosts text; comments, markers (`@revoked`, `@cert-authority`) and junk are skipped. */
export const parseKnownHosts = (text: string): KnownHost[] => {
  const out: KnownHost[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith('@')) continue;
    const [hosts, keyType, key] = line.split(/\s+/);
    if (!hosts || !keyType || !key) continue;
    out.push({ patterns: hosts.split(','), keyType, key: Buffer.from(key, 'base64') });
  }
  return out;
};

/** The name a host has in known_hosts: `host` on port 22, `[host]:port` otherwise. */
export const knownHostName = (host: string, port: number): string =>
  port === 22 ? host : `[${host}]:${port}`;

const matchesPattern = (pattern: string, name: string): boolean => {
  if (pattern.startsWith('|1|')) {
    const [, , salt, hash] = pattern.split('|');
    if (!salt || !hash) return false;
    const digest = createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest('base64');
    return digest === hash;
  }
  if (pattern.startsWith('!')) return false;
  if (!/[*?]/.test(pattern)) return pattern.toLowerCase() === name.toLowerCase();
  const re = new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
    'i',
  );
  return re.test(name);
};

/** What the known_hosts file says about the key a server presented. */
export type HostKeyVerdict = 'known' | 'unknown' | 'mismatch';

/** Checks `key` (wire format) against the entries for `host`:`port`. */
export const checkHostKey = (
  entries: readonly KnownHost[],
  host: string,
  port: number,
  key: Buffer,
): HostKeyVerdict => {
  const name = knownHostName(host, port);
  const mine = entries.filter((e) => e.patterns.some((p) => matchesPattern(p, name)));
  if (mine.length === 0) return 'unknown';
  return mine.some((e) => e.key.equals(key)) ? 'known' : 'mismatch';
};
