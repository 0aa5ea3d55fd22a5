import type { Request } from 'express';
import type { Permission, SessionInfo } from '@trellis/contract';
import type { Authenticator } from '../http/auth.js';

const ALL: readonly Permission[] = ['read', 'dags:write', 'runs:write', 'workers:admin'];

/**
 * The session of a request. Answers without a 401 (and so without a `WWW-Authenticate`
 * challenge that would open the browser's own login prompt): an unauthenticated caller gets
 * `authenticated: false` and the UI shows its login.
 */
export const describeSession = (
  auth: Authenticator,
  req: Request,
  authMode: string,
  viaCookie: (req: Request) => boolean = () => false,
): SessionInfo => {
  const who = auth.authenticate(req);
  if (!who.ok)
    return {
      authenticated: false,
      name: '',
      role: '',
      permissions: [],
      via: '',
      ...(req.headers.authorization ? { message: who.message } : {}),
    };
  const header = req.headers.authorization ?? '';
  const via =
    authMode === 'none'
      ? 'none'
      : /^basic /i.test(header)
        ? 'basic'
        : /^bearer /i.test(header)
          ? 'bearer'
          : viaCookie(req)
            ? 'oidc'
            : 'none';
  return {
    authenticated: true,
    name: who.principal.name,
    role: who.principal.role,
    permissions: ALL.filter((p) => auth.can(who.principal, p)),
    via,
  };
};
