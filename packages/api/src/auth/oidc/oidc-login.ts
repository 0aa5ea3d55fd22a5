import type { RequestHandler } from 'express';
import { page } from './oidc-page.js';
import {
  FLOW_COOKIE,
  FLOW_TTL_SEC,
  isSecure,
  redirectUri,
  type Flow,
  type OidcSetup,
} from './oidc-setup.js';
import { cookieHeader, signValue } from './signed-cookie.js';

/** Only paths of this app: never an open redirect. */
const safeReturn = (home: string, v: unknown): string =>
  typeof v === 'string' && v.startsWith(home) && !v.startsWith('//') && !v.includes('\\')
    ? v
    : home;

/**
 * `GET /oidc/login`: starts a sign-in. Keeps state, nonce and the PKCE verifier in a signed
 * short-lived cookie and redirects to the issuer's authorization endpoint.
 */
export const loginHandler =
  (s: OidcSetup): RequestHandler =>
  (req, res, next) => {
    s.client
      .flowSecrets()
      .then(async (secrets) => {
        const flow: Flow = {
          ...secrets,
          returnTo: safeReturn(s.home, req.query.returnTo),
          exp: s.now() + FLOW_TTL_SEC,
        };
        const url = await s.client.authorizationUrl({
          redirectUri: redirectUri(s, req),
          state: flow.state,
          nonce: flow.nonce,
          codeVerifier: flow.verifier,
        });
        res.setHeader(
          'Set-Cookie',
          cookieHeader(FLOW_COOKIE, signValue(s.secret, flow), {
            path: `${s.basePath}/auth/oidc`,
            maxAgeSec: FLOW_TTL_SEC,
            secure: isSecure(s, req),
          }),
        );
        res.setHeader('Cache-Control', 'no-store');
        res.redirect(302, url);
      })
      .catch((e: unknown) => {
        page(res, 502, 'Sign-in is not available', (e as Error).message, s.home);
      })
      .catch(next);
  };
