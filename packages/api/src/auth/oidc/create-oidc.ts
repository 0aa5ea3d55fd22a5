import { randomBytes } from 'node:crypto';
import { Router, type Request } from 'express';
import type { OidcConfig } from '@trellis/core';
import type { AuthResult, Authenticator, Principal } from '../../http/auth.js';
import { callbackHandler } from './oidc-callback.js';
import { OidcClient, type OidcClientOptions } from './oidc-client.js';
import { loginHandler } from './oidc-login.js';
import { SESSION_COOKIE, isSecure, type OidcSetup, type Session } from './oidc-setup.js';
import { cookieHeader, parseCookies, verifyValue } from './signed-cookie.js';

/*
 * OpenID Connect sign-in for the web UI (spec: Authentication, item 4): authorization code flow
 * with PKCE (S256), state and nonce kept in a signed short-lived cookie, the ID token checked
 * against the issuer's keys, `allowedUsers` applied, the role mapped from a claim, and a signed
 * session cookie that the API accepts like a credential.
 */

export interface OidcOptions {
  readonly config: OidcConfig;
  /** `server.basePath`. */
  readonly basePath: string;
  /** Unix seconds now. @default wall clock */
  readonly nowSec?: () => number;
  /** How the ID token's keys are fetched and checked. */
  readonly client?: OidcClientOptions;
}

export interface Oidc {
  /** `/oidc/login`, `/oidc/callback` and `/logout`, mounted at `<basePath>/auth`. */
  readonly router: Router;
  /** `inner`, plus the session cookie when the request has no Authorization header. */
  withSessions(inner: Authenticator): Authenticator;
  /** The request carries a valid session cookie. */
  viaCookie(req: Request): boolean;
}

export const createOidc = (opts: OidcOptions): Oidc => {
  const cfg = opts.config;
  const s: OidcSetup = {
    cfg,
    now: opts.nowSec ?? (() => Math.floor(Date.now() / 1000)),
    secret: cfg.sessionSecret ? Buffer.from(cfg.sessionSecret, 'utf8') : randomBytes(32),
    client: new OidcClient(cfg, opts.client),
    basePath: opts.basePath,
    home: `${opts.basePath}/`,
    cookiePath: opts.basePath || '/',
  };

  const sessionOf = (req: Request): Session | undefined =>
    verifyValue<Session>(s.secret, parseCookies(req.headers.cookie).get(SESSION_COOKIE), s.now());

  const router = Router();
  router.get('/oidc/login', loginHandler(s));
  router.get('/oidc/callback', callbackHandler(s));
  router.post('/logout', (req, res) => {
    res.setHeader(
      'Set-Cookie',
      cookieHeader(SESSION_COOKIE, '', {
        path: s.cookiePath,
        maxAgeSec: 0,
        secure: isSecure(s, req),
      }),
    );
    res.status(204).end();
  });

  return {
    router,
    viaCookie: (req) => sessionOf(req) !== undefined,
    withSessions: (inner) => ({
      authenticate: (req): AuthResult => {
        if (!req.headers.authorization) {
          const session = sessionOf(req);
          if (session) {
            const principal: Principal = { name: session.name, role: session.role };
            return { ok: true, principal };
          }
        }
        return inner.authenticate(req);
      },
      can: (principal, permission) => inner.can(principal, permission),
    }),
  };
};
