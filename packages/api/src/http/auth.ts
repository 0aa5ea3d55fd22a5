import type { Request } from 'express';
import type { Permission } from '@trellis/contract';

export type { Permission };

/** Who is calling. */
export interface Principal {
  readonly name: string;
  readonly role: string;
}

/** The result of authenticating a request. */
export type AuthResult =
  | { readonly ok: true; readonly principal: Principal }
  | { readonly ok: false; readonly challenge: string; readonly message: string };

/** Authenticates requests and authorises permissions. With auth off, everyone may do everything. */
export interface Authenticator {
  /** Routes answer without credentials (health; metrics when configured public). */
  authenticate(req: Request): AuthResult;
  can(principal: Principal, permission: Permission): boolean;
}

/** Auth mode "none" (the default for local development, spec: Authentication). */
export const noAuth: Authenticator = {
  authenticate: () => ({ ok: true, principal: { name: 'anonymous', role: 'admin' } }),
  can: () => true,
};

/** Human words for a permission, for 403 messages that name the denied action. */
export const describePermission: Readonly<Record<Permission, string>> = {
  read: 'reading',
  'dags:write': 'editing DAGs (create, update, rename, delete)',
  'runs:write': 'running DAGs (start, enqueue, stop, retry, dequeue, suspend, step status)',
  'workers:admin': 'managing workers (cordon, drain, uncordon)',
};
