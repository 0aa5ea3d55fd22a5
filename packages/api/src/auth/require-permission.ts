import type { Request, Response } from 'express';
import { AppError, ErrorCode } from '@trellis/core';
import {
  describePermission,
  type Authenticator,
  type Permission,
  type Principal,
} from '../http/auth.js';

/**
 * Authenticates `req` and checks that the caller holds every permission in `needed`, the way
 * route tables do: 401 `unauthorized` with the `WWW-Authenticate` challenge set on `res`, or
 * 403 `forbidden` naming the first denied action.
 * @throws AppError unauthorized or forbidden.
 */
export const requirePermission = (
  auth: Authenticator,
  req: Request,
  res: Response,
  needed: readonly Permission[],
): Principal => {
  const who = auth.authenticate(req);
  if (!who.ok) {
    res.setHeader('WWW-Authenticate', who.challenge);
    throw new AppError(ErrorCode.Unauthorized, who.message);
  }
  const denied = needed.find((p) => !auth.can(who.principal, p));
  if (denied !== undefined) {
    throw new AppError(
      ErrorCode.Forbidden,
      `${who.principal.name} (role ${who.principal.role}) may not do this: ${describePermission[denied]} is not allowed`,
      { permission: denied },
    );
  }
  return who.principal;
};
