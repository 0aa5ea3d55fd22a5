/** What a caller may do (roles admin, manager, operator, viewer grant these). */
export type Permission =
  /** Read anything. */
  | 'read'
  /** Create, edit, rename and delete DAG definitions. */
  | 'dags:write'
  /** Start, enqueue, stop, retry, dequeue, suspend, change step status. */
  | 'runs:write'
  /** Cordon, drain and uncordon workers (admin only). */
  | 'workers:admin';

/** GET <basePath>/auth/session: who the caller is and what they may do, for the UI. */
export interface SessionInfo {
  readonly authenticated: boolean;
  readonly name: string;
  readonly role: string;
  readonly permissions: readonly Permission[];
  /** `none` (auth off), `basic`, `bearer` or `oidc`. */
  readonly via: string;
  /** Why credentials were refused, when they were. */
  readonly message?: string;
}
