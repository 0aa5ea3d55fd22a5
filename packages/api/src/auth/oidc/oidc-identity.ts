import type { OidcConfig, Role } from '@trellis/core';
import { ROLES } from '@trellis/core';
import type { Claims } from './oidc-client.js';

/** The user name shown in the UI: e-mail, then preferred_username, then sub. */
export const userNameOf = (claims: Claims): string => {
  for (const k of ['email', 'preferred_username', 'sub'])
    if (typeof claims[k] === 'string' && claims[k] !== '') return claims[k];
  return 'unknown';
};

/** True when `allowedUsers` is empty or names the user's e-mail, user name or subject. */
export const isAllowed = (cfg: Pick<OidcConfig, 'allowedUsers'>, claims: Claims): boolean => {
  if (cfg.allowedUsers.length === 0) return true;
  const ids = ['email', 'preferred_username', 'sub']
    .map((k) => claims[k])
    .filter((v): v is string => typeof v === 'string')
    .map((v) => v.toLowerCase());
  return cfg.allowedUsers.some((u) => ids.includes(u.toLowerCase()));
};

/**
 * The most powerful role the claims give: each value of `roleClaim` (a string or a list) maps
 * through `roleMap`, or is a role name itself; none gives `defaultRole`.
 */
export const roleOf = (
  cfg: Pick<OidcConfig, 'roleClaim' | 'roleMap' | 'defaultRole'>,
  claims: Claims,
): Role => {
  const raw = claims[cfg.roleClaim];
  const values = (Array.isArray(raw) ? raw : [raw]).filter(
    (v): v is string => typeof v === 'string',
  );
  const roles = values.flatMap((v): Role[] => {
    const mapped = Object.hasOwn(cfg.roleMap, v) ? cfg.roleMap[v] : undefined;
    if (mapped) return [mapped];
    return (ROLES as readonly string[]).includes(v) ? [v as Role] : [];
  });
  // ROLES runs from most to least powerful.
  return ROLES.find((r) => roles.includes(r)) ?? cfg.defaultRole;
};
