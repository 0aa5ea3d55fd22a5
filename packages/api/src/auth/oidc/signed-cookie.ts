import { createHmac, timingSafeEqual } from 'node:crypto';

/*
 * Signed cookie values: base64url JSON, a dot, and an HMAC-SHA256 of it. Used for the OIDC
 * session (who signed in, until when) and the short-lived sign-in flow (state, nonce, PKCE
 * verifier), so the server keeps no session table.
 */

const b64url = (buf: Buffer): string => buf.toString('base64url');

/** `payload.signature` for a JSON value with an expiry (`exp`, Unix seconds). */
export const signValue = (secret: Buffer, value: object): string => {
  const body = b64url(Buffer.from(JSON.stringify(value), 'utf8'));
  const mac = createHmac('sha256', secret).update(body).digest();
  return `${body}.${b64url(mac)}`;
};

/** The value when the signature holds and `exp` is still ahead of `nowSec`; else undefined. */
export const verifyValue = <T extends { exp: number }>(
  secret: Buffer,
  token: string | undefined,
  nowSec: number,
): T | undefined => {
  if (!token) return undefined;
  const dot = token.indexOf('.');
  if (dot <= 0) return undefined;
  const body = token.slice(0, dot);
  const given = Buffer.from(token.slice(dot + 1), 'base64url');
  const want = createHmac('sha256', secret).update(body).digest();
  if (given.length !== want.length || !timingSafeEqual(given, want)) return undefined;
  try {
    const value = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as T;
    return typeof value.exp === 'number' && value.exp > nowSec ? value : undefined;
  } catch {
    return undefined;
  }
};

/** Cookies of a `Cookie` header by name (first one wins). */
export const parseCookies = (header: string | undefined): Map<string, string> => {
  const out = new Map<string, string>();
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    if (out.has(name)) continue;
    try {
      out.set(name, decodeURIComponent(part.slice(eq + 1).trim()));
    } catch {
      out.set(name, part.slice(eq + 1).trim());
    }
  }
  return out;
};

/** A `Set-Cookie` value: HttpOnly, SameSite=Lax, Secure on https. */
export const cookieHeader = (
  name: string,
  value: string,
  opts: { path: string; maxAgeSec: number; secure: boolean },
): string =>
  `${name}=${encodeURIComponent(value)}; Path=${opts.path}; Max-Age=${opts.maxAgeSec}; HttpOnly; SameSite=Lax${opts.secure ? '; Secure' : ''}`;
