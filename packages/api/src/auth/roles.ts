import type { Role } from '@trellis/core';
import type { Permission } from '../http/auth.js';

/**
 * What each role may do (docs/decisions.md): `admin` everything, `manager` edits DAGs and
 * runs them, `operator` starts, stops, enqueues, retries, dequeues and suspends, `viewer` reads.
 */
export const ROLE_PERMISSIONS: Readonly<Record<Role, readonly Permission[]>> = {
  admin: ['read', 'dags:write', 'runs:write', 'workers:admin'],
  manager: ['read', 'dags:write', 'runs:write'],
  operator: ['read', 'runs:write'],
  viewer: ['read'],
};

/** True when `role` grants `permission`; an unknown role grants nothing. */
export const roleCan = (role: string, permission: Permission): boolean =>
  Object.hasOwn(ROLE_PERMISSIONS, role) && ROLE_PERMISSIONS[role as Role].includes(permission);
