import { createPublicKey, verify, constants, type JsonWebKey, type KeyObject } from 'node:crypto';

/*
 * ID token checks (OpenID Connect Core 3.1.3.7): a JWS signed by one of the issuer's JWKS keys,
 * from the right issuer, for this client, not expired, with the nonce of this sign-in.
 */

export type Claims = Record<string, unknown>;

export interface IdTokenExpectations {
  readonly issuer: string;
  readonly clientId: string;
  readonly nonce: string;
  readonly nowSec: number;
  /** Allowed clock difference, seconds. */
  readonly skewSec?: number;
}

const decodePart = (part: string | undefined): Record<string, unknown> => {
  if (!part) throw new Error('the ID token is not a JWT (three dot-separated parts)');
  return JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;
};

const verifySignature = (alg: string, key: KeyObject, data: Buffer, sig: Buffer): boolean => {
  switch (alg) {
    case 'RS256':
    case 'RS384':
    case 'RS512':
      return verify(`sha${alg.slice(2)}`, data, key, sig);
    case 'PS256':
    case 'PS384':
    case 'PS512':
      return verify(
        `sha${alg.slice(2)}`,
        data,
        { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: Number(alg.slice(2)) / 8 },
        sig,
      );
    case 'ES256':
    case 'ES384':
    case 'ES512':
      return verify(
        `sha${alg === 'ES512' ? '512' : alg.slice(2)}`,
        data,
        { key, dsaEncoding: 'ieee-p1363' },
        sig,
      );
    case 'EdDSA':
      return verify(null, data, key, sig);
    default:
      throw new Error(
        `the ID token is signed with ${alg}, which is not supported (use RS256 or ES256)`,
      );
  }
};

/**
 * The claims of a valid ID token.
 * @throws Error saying which check failed.
 */
export const verifyIdToken = (
  token: string,
  jwks: readonly JsonWebKey[],
  want: IdTokenExpectations,
): Claims => {
  const [h, p, s] = token.split('.');
  const header = decodePart(h);
  const claims = decodePart(p);
  if (s === undefined) throw new Error('the ID token has no signature');
  const alg = typeof header.alg === 'string' ? header.alg : '';
  const kid = typeof header.kid === 'string' ? header.kid : undefined;
  const candidates = jwks.filter(
    (k) => (kid === undefined || k.kid === kid) && (k.use === undefined || k.use === 'sig'),
  );
  if (candidates.length === 0)
    throw new Error(`no key of the issuer matches the ID token (kid ${kid ?? 'none'})`);
  const data = Buffer.from(`${h}.${p}`, 'utf8');
  const sig = Buffer.from(s, 'base64url');
  const ok = candidates.some((jwk) => {
    try {
      return verifySignature(alg, createPublicKey({ key: jwk, format: 'jwk' }), data, sig);
    } catch (e) {
      if (e instanceof Error && e.message.includes('not supported')) throw e;
      return false;
    }
  });
  if (!ok) throw new Error('the ID token signature does not verify');
  if (claims.iss !== want.issuer)
    throw new Error(`the ID token is from ${String(claims.iss)}, not ${want.issuer}`);
  const aud = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (!aud.includes(want.clientId))
    throw new Error(`the ID token is not for client ${want.clientId}`);
  const skew = want.skewSec ?? 60;
  if (typeof claims.exp !== 'number' || claims.exp + skew < want.nowSec)
    throw new Error('the ID token has expired');
  if (claims.nonce !== want.nonce)
    throw new Error('the ID token nonce does not match this sign-in');
  return claims;
};
