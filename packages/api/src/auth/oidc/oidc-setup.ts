import type { Request } from 'express';
import type { OidcConfig } from '@trellis/core';
import type { OidcClient } from './oidc-client.js';

/*
 * What the OIDC sign-in handlers share: the cookie names, the signed cookie values (the session,
 * and the short-lived state of one sign-in), and the settings of one createOidc.
 */

export const SESSION_COOKIE = 'trellis_session';
export const FLOW_COOKIE = 'trellis_oidc_flow';
export const FLOW_TTL_SEC = 600;

/** The session cookie's value: who signed in, with which role, until when. */
export interface Session {
  readonly name: string;
  readonly role: string;
  readonly exp: number;
}

/** The flow cookie's value: state, nonce and PKCE verifier of one sign-in, and where it returns. */
export interface Flow {
  readonly state: string;
  readonly nonce: string;
  readonly verifier: string;
  readonly returnTo: string;
  readonly exp: number;
}

/** The settings and state one createOidc gives its handlers. */
export interface OidcSetup {
  readonly cfg: OidcConfig;
  /** Unix seconds now. */
  readonly now: () => number;
  /** Key of the signed cookies. */
  readonly secret: Buffer;
  readonly client: OidcClient;
  /** `server.basePath`. */
  readonly basePath: string;
  /** `<basePath>/`: the app's start page. */
  readonly home: string;
  /** Path of the session cookie. */
  readonly cookiePath: string;
}

/** The redirect URI registered with the issuer: `clientUrl`, or this request's origin. */
export const redirectUri = (s: OidcSetup, req: Request): string =>
  `${s.cfg.clientUrl || `${req.protocol}://${req.get('host') ?? 'localhost'}${s.basePath}`}/auth/oidc/callback`;

/** Whether cookies get `Secure`: `clientUrl` is https, or (without one) this request is. */
export const isSecure = (s: OidcSetup, req: Request): boolean =>
  s.cfg.clientUrl ? s.cfg.clientUrl.startsWith('https:') : req.protocol === 'https';
