import { createHash, timingSafeEqual } from 'node:crypto';
import type { AuthConfig } from '@trellis/core';
import { noAuth, type AuthResult, type Authenticator, type Principal } from '../http/auth.js';
import { parseAuthorization } from './authorization-header.js';
import { roleCan } from './roles.js';

/** The realm of every 401 challenge. */
export const AUTH_REALM = 'trellis';

interface Credential {
  readonly principal: Principal;
  /** SHA-256 of the user name (tokens: empty). */
  readonly nameDigest: Buffer;
  /** SHA-256 of the password or token. */
  readonly secretDigest: Buffer;
}

const sha256 = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/**
 * The credential whose digests all match, comparing against every entry without stopping early:
 * digests have a fixed length, so neither the secret's length nor which entry matched (nor
 * whether a user name exists) shows in the time taken.
 */
const findMatch = (
  entries: readonly Credential[],
  nameDigest: Buffer,
  secretDigest: Buffer,
): Principal | undefined => {
  let found: Principal | undefined;
  for (const entry of entries) {
    const nameOk = timingSafeEqual(entry.nameDigest, nameDigest);
    const secretOk = timingSafeEqual(entry.secretDigest, secretDigest);
    if (nameOk && secretOk && found === undefined) found = entry.principal;
  }
  return found;
};

/**
 * The API's authenticator for `config.auth` (spec: Authentication; docs/decisions.md).
 * Mode `none` lets everyone do everything. Otherwise a request must carry `Authorization: Basic`
 * with a configured user or `Authorization: Bearer` with a configured token: both kinds are
 * accepted in either mode, and `mode` only picks the challenge of a 401 (`Basic realm="trellis"`
 * or `Bearer realm="trellis"`). Comparison is constant-time over SHA-256 digests; refusal
 * messages never contain what the caller sent.
 */
export const createAuthenticator = (config: Readonly<AuthConfig>): Authenticator => {
  if (config.mode === 'none') return noAuth;
  const empty = sha256('');
  const users: Credential[] = config.users.map((u) => ({
    principal: Object.freeze({ name: u.name, role: u.role }),
    nameDigest: sha256(u.name),
    secretDigest: Buffer.from(u.passwordSha256, 'hex'),
  }));
  const tokens: Credential[] = config.tokens.map((t) => ({
    principal: Object.freeze({ name: t.name, role: t.role }),
    nameDigest: empty,
    secretDigest: Buffer.from(t.tokenSha256, 'hex'),
  }));

  const challenge = `${config.mode === 'basic' ? 'Basic' : 'Bearer'} realm="${AUTH_REALM}"`;
  const ways = [
    ...(users.length > 0 ? ['Authorization: Basic <base64 of user:password>'] : []),
    ...(tokens.length > 0 ? ['Authorization: Bearer <token>'] : []),
  ];
  if (config.mode === 'bearer') ways.reverse();
  const howTo = `send ${ways.join(' or ')}`;
  const refuse = (message: string): AuthResult => ({ ok: false, challenge, message });
  const accept = (principal: Principal | undefined, failure: string): AuthResult =>
    principal ? { ok: true, principal } : refuse(failure);

  return {
    authenticate: (req) => {
      const presented = parseAuthorization(req.headers.authorization);
      switch (presented.kind) {
        case 'none':
          return refuse(`authentication required: ${howTo}`);
        case 'malformed':
          return refuse(`invalid Authorization header: ${presented.reason}; ${howTo}`);
        case 'basic':
          return accept(
            findMatch(users, sha256(presented.username), sha256(presented.password)),
            'invalid user name or password',
          );
        case 'bearer':
          return accept(findMatch(tokens, empty, sha256(presented.token)), 'invalid token');
      }
    },
    can: (principal, permission) => roleCan(principal.role, permission),
  };
};
