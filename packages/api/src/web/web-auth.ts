import type { AuthConfig } from '@trellis/core';
import { createAuthenticator } from '../auth/create-authenticator.js';
import { createOidc } from '../auth/oidc/create-oidc.js';
import type { Authenticator } from '../http/auth.js';
import type { WebOptions } from './serve-web.js';

/**
 * The API's authenticator and the web UI's sign-in options for `config.auth`: with `auth.oidc`,
 * the OIDC routes and the session cookie accepted next to Basic and Bearer credentials.
 */
export const createWebAuth = (
  auth: Readonly<AuthConfig>,
  basePath: string,
): { readonly auth: Authenticator; readonly web: Omit<WebOptions, 'root'> } => {
  const inner = createAuthenticator(auth);
  const passwordLogin = auth.mode !== 'none' && auth.users.length + auth.tokens.length > 0;
  if (!auth.oidc || auth.mode === 'none')
    return { auth: inner, web: { authMode: auth.mode, passwordLogin } };
  const oidc = createOidc({ config: auth.oidc, basePath });
  return {
    auth: oidc.withSessions(inner),
    web: {
      authMode: auth.mode,
      passwordLogin,
      oidc: true,
      authRouter: oidc.router,
      viaCookie: (req) => oidc.viaCookie(req),
    },
  };
};
