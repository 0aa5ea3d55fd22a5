import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './start-all.js';

/** The passwords the tests put in place of docs/security.md's placeholders. */
export const ACL_PASSWORDS = {
  '<coordinator-password>': 'coord-secret',
  '<worker-password>': 'worker-secret',
} as const;

/** The `redis-cli ACL SETUSER ...` lines of docs/security.md, as an operator copies them. */
export const aclLinesOfDocs = (): string[] =>
  readFileSync(join(ROOT, 'docs', 'security.md'), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('redis-cli ACL SETUSER '));

/**
 * Runs docs/security.md's ACL lines with bash and the real redis-cli against the Redis on `port`,
 * the placeholders replaced by {@link ACL_PASSWORDS}. Throws when a line fails or there is none.
 */
export const applyAclOfDocs = (port: number): void => {
  const lines = aclLinesOfDocs();
  if (lines.length === 0) throw new Error('docs/security.md has no redis-cli ACL SETUSER lines');
  for (const line of lines) {
    let cmd = line.replace(/^redis-cli /, `redis-cli -p ${port} `);
    for (const [k, v] of Object.entries(ACL_PASSWORDS)) cmd = cmd.replaceAll(k, v);
    const out = execFileSync('bash', ['-c', cmd], { encoding: 'utf8' }).trim();
    if (out !== 'OK') throw new Error(`${cmd}\nanswered: ${out}`);
  }
};

/** `base` (redis://host:port) with a user and password. */
export const redisUrlFor = (base: string, user: string, password: string): string => {
  const u = new URL(base);
  u.username = user;
  u.password = password;
  return u.toString();
};

/**
 * What the real redis-cli prints (stderr, where it reports a failed AUTH, then stdout with the
 * answer or its error text) for `args` as `user`.
 */
export const redisCli = (port: number, user: string, password: string, args: string[]): string => {
  const r = spawnSync(
    'redis-cli',
    ['-p', String(port), '--user', user, '--pass', password, '--no-auth-warning', ...args],
    { encoding: 'utf8' },
  );
  return `${r.stderr}${r.stdout}`.trim();
};
