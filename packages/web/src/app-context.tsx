import { createContext, useContext } from 'react';
import type { Permission, SessionInfo } from '@trellis/contract';
import type { ApiClient } from './api/client';
import type { CredentialStore } from './api/credentials';
import type { BootConfig } from './boot-config';

/** What every page needs: the API, the boot config, and what the caller may do. */
export interface AppValue {
  readonly api: ApiClient;
  readonly boot: BootConfig;
  readonly credentials: CredentialStore;
  readonly session: SessionInfo;
  /** Re-read the session (after a login or logout). */
  refreshSession: () => void;
  /** Show a short message at the bottom of the screen. */
  toast: (message: string, tone?: 'ok' | 'error') => void;
}

export const AppContext = createContext<AppValue | undefined>(undefined);

export const useApp = (): AppValue => {
  const v = useContext(AppContext);
  if (!v) throw new Error('useApp outside AppContext');
  return v;
};

/** True when the caller holds `permission` (`dags:write`, `runs:write`). */
export const useCan = (permission: Permission): boolean => {
  const { session } = useApp();
  return session.permissions.includes(permission);
};

/** The tooltip of a control the caller's role may not use. */
export const deniedTitle = (session: SessionInfo, what: string): string =>
  `${session.name || 'You'} (role ${session.role || 'none'}) may not ${what}`;
