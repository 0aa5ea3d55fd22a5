import { createHash, randomBytes } from 'node:crypto';
import { Router, type Request, type Response } from 'express';
import type { OidcConfig } from '@trellis/core';
import type { AuthResult, Authenticator, Principal } from '../../http/auth.js';
import { verifyIdToken } from './id-token.js';
import { OidcClient } from './oidc-client.js';
import { isAllowed, roleOf, userNameOf } from './oidc-identity.js';
import { cookieHeader, parseCookies, signValue, verifyValue } from './signed-cookie.js';

/*
 * OpenID Connect sign-in for the web UI (spec: Authentication, item 4): authorization code flow
 * with PKCE (S256), state and nonce kept in a signed short-lived cookie, the ID token checked
 * against the issuer's keys, `allowedUsers` applied, the role mapped from a claim, and a signed
 * session cookie that the API accepts like a credential.
 */

export const SESSION_COOKIE = 'trellis_session';
const FLOW_COOKIE = 'trellis_oidc_flow';
const FLOW_TTL_SEC = 600;

interface Session {
  readonly name: string;
  readonly role: string;
  readonly exp: number;
}
interface Flow {
  readonly state: string;
  readonly nonce: string;
  readonly verifier: string;
  readonly returnTo: string;
  readonly exp: number;
}

export interface OidcOptions {
  readonly config: OidcConfig;
  /** `server.basePath`. */
  readonly basePath: string;
  /** Unix seconds now. @default wall clock */
  readonly nowSec?: () => number;
  readonly fetch?: typeof fetch;
}

export interface Oidc {
  /** `/oidc/login`, `/oidc/callback` and `/logout`, mounted at `<basePath>/auth`. */
  readonly router: Router;
  /** `inner`, plus the session cookie when the request has no Authorization header. */
  withSessions(inner: Authenticator): Authenticator;
  /** The request carries a valid session cookie. */
  viaCookie(req: Request): boolean;
}

const rand = (): string => randomBytes(32).toString('base64url');

const page = (res: Response, status: number, title: string, text: string, link: string): void => {
  const esc = (s: string) =>
    s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  res
    .status(status)
    .type('html')
    .setHeader('Cache-Control', 'no-store')
    .send(
      `<!doctype html><meta charset="utf-8"><title>${esc(title)}</title>` +
        `<body style="font-family:system-ui,sans-serif;max-width:40em;margin:4em auto">` +
        `<h1>${esc(title)}</h1><p>${esc(text)}</p><p><a href="${esc(link)}">Back to Trellis</a></p></body>`,
    );
};

export const createOidc = (opts: OidcOptions): Oidc => {
  const cfg = opts.config;
  const now = opts.nowSec ?? (() => Math.floor(Date.now() / 1000));
  const secret = cfg.sessionSecret ? Buffer.from(cfg.sessionSecret, 'utf8') : randomBytes(32);
  const client = new OidcClient(cfg, opts.fetch);
  const home = `${opts.basePath}/`;
  const cookiePath = opts.basePath || '/';

  const redirectUri = (req: Request): string =>
    `${cfg.clientUrl || `${req.protocol}://${req.get('host') ?? 'localhost'}${opts.basePath}`}/auth/oidc/callback`;
  const secure = (req: Request): boolean =>
    cfg.clientUrl ? cfg.clientUrl.startsWith('https:') : req.protocol === 'https';
  /** Only paths of this app: never an open redirect. */
  const safeReturn = (v: unknown): string =>
    typeof v === 'string' && v.startsWith(home) && !v.startsWith('//') && !v.includes('\\')
      ? v
      : home;

  const sessionOf = (req: Request): Session | undefined =>
    verifyValue<Session>(secret, parseCookies(req.headers.cookie).get(SESSION_COOKIE), now());

  const router = Router();
  router.get('/oidc/login', (req, res, next) => {
    const flow: Flow = {
      state: rand(),
      nonce: rand(),
      verifier: rand(),
      returnTo: safeReturn(req.query.returnTo),
      exp: now() + FLOW_TTL_SEC,
    };
    const challenge = createHash('sha256').update(flow.verifier).digest('base64url');
    client
      .authorizationUrl({
        redirectUri: redirectUri(req),
        state: flow.state,
        nonce: flow.nonce,
        codeChallenge: challenge,
      })
      .then((url) => {
        res.setHeader(
          'Set-Cookie',
          cookieHeader(FLOW_COOKIE, signValue(secret, flow), {
            path: `${opts.basePath}/auth/oidc`,
            maxAgeSec: FLOW_TTL_SEC,
            secure: secure(req),
          }),
        );
        res.setHeader('Cache-Control', 'no-store');
        res.redirect(302, url);
      })
      .catch((e: unknown) => {
        page(res, 502, 'Sign-in is not available', (e as Error).message, home);
      })
      .catch(next);
  });

  router.get('/oidc/callback', (req, res, next) => {
    const flow = verifyValue<Flow>(
      secret,
      parseCookies(req.headers.cookie).get(FLOW_COOKIE),
      now(),
    );
    const clearFlow = cookieHeader(FLOW_COOKIE, '', {
      path: `${opts.basePath}/auth/oidc`,
      maxAgeSec: 0,
      secure: secure(req),
    });
    const retry = `${opts.basePath}/auth/oidc/login`;
    if (typeof req.query.error === 'string') {
      res.setHeader('Set-Cookie', clearFlow);
      page(
        res,
        401,
        'Sign-in was refused',
        `${req.query.error}: ${typeof req.query.error_description === 'string' ? req.query.error_description : ''}`,
        retry,
      );
      return;
    }
    if (!flow || req.query.state !== flow.state || typeof req.query.code !== 'string') {
      res.setHeader('Set-Cookie', clearFlow);
      page(res, 400, 'Sign-in expired', 'This sign-in is unknown or too old: start again.', retry);
      return;
    }
    const code = req.query.code;
    (async () => {
      const idToken = await client.exchangeCode({
        code,
        redirectUri: redirectUri(req),
        codeVerifier: flow.verifier,
      });
      const meta = await client.metadata();
      const check = (keys: Parameters<typeof verifyIdToken>[1]) =>
        verifyIdToken(idToken, keys, {
          issuer: meta.issuer,
          clientId: cfg.clientId,
          nonce: flow.nonce,
          nowSec: now(),
        });
      let claims;
      try {
        claims = check(await client.keys(false));
      } catch {
        claims = check(await client.keys(true)); // the issuer may have rotated its keys
      }
      const name = userNameOf(claims);
      if (!isAllowed(cfg, claims)) {
        res.setHeader('Set-Cookie', clearFlow);
        page(
          res,
          403,
          'No permission',
          `${name} may not use this Trellis: not in auth.oidc.allowedUsers.`,
          home,
        );
        return;
      }
      const session: Session = { name, role: roleOf(cfg, claims), exp: now() + cfg.sessionTtlSec };
      res.setHeader('Set-Cookie', [
        clearFlow,
        cookieHeader(SESSION_COOKIE, signValue(secret, session), {
          path: cookiePath,
          maxAgeSec: cfg.sessionTtlSec,
          secure: secure(req),
        }),
      ]);
      res.setHeader('Cache-Control', 'no-store');
      res.redirect(302, flow.returnTo);
    })()
      .catch((e: unknown) => {
        res.setHeader('Set-Cookie', clearFlow);
        page(res, 502, 'Sign-in failed', (e as Error).message, retry);
      })
      .catch(next);
  });

  router.post('/logout', (req, res) => {
    res.setHeader(
      'Set-Cookie',
      cookieHeader(SESSION_COOKIE, '', { path: cookiePath, maxAgeSec: 0, secure: secure(req) }),
    );
    res.status(204).end();
  });

  return {
    router,
    viaCookie: (req) => sessionOf(req) !== undefined,
    withSessions: (inner) => ({
      authenticate: (req): AuthResult => {
        if (!req.headers.authorization) {
          const s = sessionOf(req);
          if (s) {
            const principal: Principal = { name: s.name, role: s.role };
            return { ok: true, principal };
          }
        }
        return inner.authenticate(req);
      },
      can: (principal, permission) => inner.can(principal, permission),
    }),
  };
};
