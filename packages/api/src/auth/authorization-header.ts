/** Credentials as a request presents them in its `Authorization` header. */
export type PresentedCredentials =
  | { readonly kind: 'none' }
  | { readonly kind: 'basic'; readonly username: string; readonly password: string }
  | { readonly kind: 'bearer'; readonly token: string }
  /** A header that is not usable: `reason` is safe to show (it never holds the secret). */
  | { readonly kind: 'malformed'; readonly reason: string };

const SCHEME = /^([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)(?: +(.*))?$/s;

/**
 * Parses an `Authorization` header: `Basic <base64 of name:password>` (RFC 7617) or
 * `Bearer <token>` (RFC 6750), schemes case-insensitive. Never throws.
 */
export const parseAuthorization = (header: string | undefined): PresentedCredentials => {
  if (header === undefined || header.trim() === '') return { kind: 'none' };
  const m = SCHEME.exec(header.trim());
  const scheme = m?.[1]?.toLowerCase();
  const rest = m?.[2]?.trim() ?? '';
  if (scheme === 'basic') {
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(rest)) {
      return { kind: 'malformed', reason: 'Basic credentials are not base64 of "user:password"' };
    }
    const decoded = Buffer.from(rest, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon === -1) {
      return {
        kind: 'malformed',
        reason: 'Basic credentials have no ":" between user and password',
      };
    }
    return { kind: 'basic', username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
  }
  if (scheme === 'bearer') {
    if (rest === '') return { kind: 'malformed', reason: 'the Bearer token is empty' };
    return { kind: 'bearer', token: rest };
  }
  // The scheme is not echoed: a client that sends a bare token would see its secret in the answer.
  return { kind: 'malformed', reason: 'the Authorization scheme is neither Basic nor Bearer' };
};
