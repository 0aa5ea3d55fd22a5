import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConfigSchema } from '@trellis/core';
import { createOidc } from './create-oidc.js';

/*
 * The ID token checks of the sign-in, end to end over HTTP: Trellis's OIDC routes on a real
 * server, against a small issuer started here that signs what each test asks for (expired, for
 * another audience, from another issuer, unsigned, signed by an unknown key, after a key
 * rotation). The issuer checks PKCE and the client secret like a real one.
 */

interface SigningKey {
  readonly kid: string;
  readonly priv: CryptoKey;
  readonly pub: JWK;
}

const newKey = async (kid: string): Promise<SigningKey> => {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  return { kid, priv: privateKey, pub: { ...(await exportJWK(publicKey)), kid, use: 'sig' } };
};

const listen = async (server: Server): Promise<string> => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

/** What the issuer puts in the next ID token: claims to change, and how to sign. */
interface Tamper {
  claims?: Record<string, unknown>;
  unsigned?: boolean;
  signWith?: SigningKey;
}

let issuer: string;
let trellis: string;
let published: SigningKey[];
let signing: SigningKey;
let tamper: Tamper = {};
let jwksFetches = 0;
const codes = new Map<string, { nonce: string; challenge: string }>();
const servers: Server[] = [];

const idToken = async (nonce: string): Promise<string> => {
  const now = Math.floor(Date.now() / 1000);
  const claims = { iss: issuer, aud: 'trellis-ui', sub: 'alice', email: 'alice@example.com' };
  const body = { ...claims, iat: now, exp: now + 300, nonce, ...tamper.claims };
  if (tamper.unsigned) {
    const part = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
    return `${part({ alg: 'none', typ: 'JWT' })}.${part(body)}.`;
  }
  const key = tamper.signWith ?? signing;
  return new SignJWT(body).setProtectedHeader({ alg: 'RS256', kid: key.kid }).sign(key.priv);
};

const json = (res: ServerResponse, status: number, v: unknown): void => {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(v));
};

/** Discovery, keys, an authorization endpoint that signs alice in at once, and tokens. */
const issuerRoutes = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
  const url = new URL(req.url ?? '/', issuer);
  if (url.pathname === '/.well-known/openid-configuration')
    return json(res, 200, {
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      jwks_uri: `${issuer}/jwks`,
      response_types_supported: ['code'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
      code_challenge_methods_supported: ['S256'],
    });
  if (url.pathname === '/jwks') {
    jwksFetches += 1;
    return json(res, 200, { keys: published.map((k) => k.pub) });
  }
  if (url.pathname === '/authorize') {
    const q = url.searchParams;
    const code = `code-${codes.size}`;
    codes.set(code, { nonce: q.get('nonce') ?? '', challenge: q.get('code_challenge') ?? '' });
    const back = new URL(q.get('redirect_uri') ?? '');
    back.searchParams.set('code', code);
    back.searchParams.set('state', q.get('state') ?? '');
    res.writeHead(302, { Location: back.toString() }).end();
    return;
  }
  let body = '';
  for await (const chunk of req) body += String(chunk);
  const form = new URLSearchParams(body);
  const grant = codes.get(form.get('code') ?? '');
  const verifier = form.get('code_verifier') ?? '';
  // client_secret_basic: form-encoded id and secret (RFC 6749 2.3.1)
  const basic = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64')
    .toString('utf8')
    .split(':')
    .map(decodeURIComponent)
    .join(':');
  if (
    !grant ||
    basic !== 'trellis-ui:s3cret' ||
    createHash('sha256').update(verifier).digest('base64url') !== grant.challenge
  )
    return json(res, 400, { error: 'invalid_grant' });
  json(res, 200, {
    access_token: 'at',
    token_type: 'Bearer',
    expires_in: 300,
    id_token: await idToken(grant.nonce),
  });
};

beforeAll(async () => {
  signing = await newKey('k1');
  published = [signing];
  const op = createServer((req, res) => {
    issuerRoutes(req, res).catch((e: unknown) => json(res, 500, { error: String(e) }));
  });
  servers.push(op);
  issuer = await listen(op);
  const cfg = ConfigSchema.parse({
    home: '/h',
    auth: { oidc: { issuer, clientId: 'trellis-ui', clientSecret: 's3cret' } },
  }).auth.oidc;
  if (!cfg) throw new Error('no oidc config');
  const oidc = createOidc({ config: cfg, basePath: '', client: { jwksCooldownMs: 0 } });
  const app = express();
  app.use('/auth', oidc.router);
  const web = createServer(app);
  servers.push(web);
  trellis = await listen(web);
});

afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
});

beforeEach(() => {
  tamper = {};
});

/** Follows login -> issuer -> callback by hand; the callback's status, cookies and page. */
const signIn = async () => {
  const login = await fetch(`${trellis}/auth/oidc/login`, { redirect: 'manual' });
  const flowCookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const authorize = await fetch(login.headers.get('location') ?? '', { redirect: 'manual' });
  const callback = await fetch(authorize.headers.get('location') ?? '', {
    redirect: 'manual',
    headers: { Cookie: flowCookie },
  });
  return {
    status: callback.status,
    cookies: callback.headers.getSetCookie().join('\n'),
    text: await callback.text(),
  };
};

const refused = async (why: RegExp) => {
  const r = await signIn();
  expect(r.status).toBe(502);
  expect(r.text).toContain('Sign-in failed');
  expect(r.text).toMatch(why);
  expect(r.cookies).not.toContain('trellis_session=ey');
};

describe('OIDC sign-in checks the ID token', () => {
  it('signs in with a valid token', async () => {
    const r = await signIn();
    expect(r.status).toBe(302);
    expect(r.cookies).toMatch(/trellis_session=[^;]+\.[^;]+; Path=\/; Max-Age=86400; HttpOnly/);
  });

  it('refuses an expired token', async () => {
    const past = Math.floor(Date.now() / 1000) - 3600;
    tamper = { claims: { iat: past - 300, exp: past } };
    await refused(/exp/);
  });

  it('refuses a token for another audience', async () => {
    tamper = { claims: { aud: 'another-client' } };
    await refused(/aud/);
  });

  it('refuses a token from another issuer', async () => {
    tamper = { claims: { iss: 'https://evil.example.com' } };
    await refused(/iss/);
  });

  it('refuses an unsigned token (alg none)', async () => {
    tamper = { unsigned: true };
    await refused(/alg/);
  });

  it('refuses a token whose nonce is not this sign-in', async () => {
    tamper = { claims: { nonce: 'another-sign-in' } };
    await refused(/nonce/);
  });

  it('refuses a token signed by a key the issuer does not publish', async () => {
    tamper = { signWith: await newKey('k1') }; // same key id, another key
    await refused(/signature verification failed/);
  });

  it('picks up the new key after a key rotation at the issuer', async () => {
    expect((await signIn()).status).toBe(302); // the keys of k1 are cached now
    const before = jwksFetches;
    signing = await newKey('k2');
    published = [signing];
    const r = await signIn();
    expect(r.status).toBe(302);
    expect(r.cookies).toContain('trellis_session=');
    expect(jwksFetches).toBe(before + 1);
  });
});
