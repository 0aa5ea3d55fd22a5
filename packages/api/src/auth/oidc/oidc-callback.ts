import type { Request, RequestHandler, Response } from 'express';
import { isAllowed, roleOf, userNameOf } from './oidc-identity.js';
import { page } from './oidc-page.js';
import {
  FLOW_COOKIE,
  SESSION_COOKIE,
  isSecure,
  redirectUri,
  type Flow,
  type OidcSetup,
  type Session,
} from './oidc-setup.js';
import { cookieHeader, parseCookies, signValue, verifyValue } from './signed-cookie.js';

/**
 * `GET /oidc/callback`: the issuer's answer. Checks it against the flow cookie, then finishes
 * the sign-in; every outcome clears the flow cookie.
 */
export const callbackHandler =
  (s: OidcSetup): RequestHandler =>
  (req, res, next) => {
    const flow = verifyValue<Flow>(
      s.secret,
      parseCookies(req.headers.cookie).get(FLOW_COOKIE),
      s.now(),
    );
    const clearFlow = cookieHeader(FLOW_COOKIE, '', {
      path: `${s.basePath}/auth/oidc`,
      maxAgeSec: 0,
      secure: isSecure(s, req),
    });
    const retry = `${s.basePath}/auth/oidc/login`;
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
    finishSignIn(s, req, res, { flow, clearFlow })
      .catch((e: unknown) => {
        res.setHeader('Set-Cookie', clearFlow);
        page(res, 502, 'Sign-in failed', (e as Error).message, retry);
      })
      .catch(next);
  };

/**
 * Exchanges the code for tokens, checks the ID token (oidc-client.ts), applies `allowedUsers`,
 * and sets the session cookie.
 */
const finishSignIn = async (
  s: OidcSetup,
  req: Request,
  res: Response,
  sign: { readonly flow: Flow; readonly clearFlow: string },
): Promise<void> => {
  const { flow, clearFlow } = sign;
  const { cfg, now } = s;
  // The URL the issuer sent the browser to, as registered (clientUrl behind a proxy).
  const callbackUrl = new URL(redirectUri(s, req));
  callbackUrl.search = new URL(req.originalUrl, 'http://x').search;
  const claims = await s.client.signIn(callbackUrl, {
    state: flow.state,
    nonce: flow.nonce,
    codeVerifier: flow.verifier,
  });
  const name = userNameOf(claims);
  if (!isAllowed(cfg, claims)) {
    res.setHeader('Set-Cookie', clearFlow);
    page(
      res,
      403,
      'No permission',
      `${name} may not use this Trellis: not in auth.oidc.allowedUsers.`,
      s.home,
    );
    return;
  }
  const session: Session = { name, role: roleOf(cfg, claims), exp: now() + cfg.sessionTtlSec };
  res.setHeader('Set-Cookie', [
    clearFlow,
    cookieHeader(SESSION_COOKIE, signValue(s.secret, session), {
      path: s.cookiePath,
      maxAgeSec: cfg.sessionTtlSec,
      secure: isSecure(s, req),
    }),
  ]);
  res.setHeader('Cache-Control', 'no-store');
  res.redirect(302, flow.returnTo);
};
