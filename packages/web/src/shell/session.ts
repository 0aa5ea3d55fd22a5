import { useCallback, useEffect, useMemo, useState } from 'react';
import type { SessionInfo } from '@trellis/contract';
import { ApiClient } from '../api/client';
import { sessionCredentials } from '../api/credentials';
import type { BootConfig } from '../boot-config';

/** Asks the server who the caller is (`<basePath>/auth/session`). */
export const fetchSession = async (
  boot: BootConfig,
  authorization: string | undefined,
): Promise<SessionInfo> => {
  const res = await fetch(`${boot.basePath}/auth/session`, {
    headers: authorization ? { Authorization: authorization } : {},
    credentials: boot.oidc ? 'same-origin' : 'omit',
  });
  if (!res.ok) throw new Error(`the server answered ${res.status} to the session check`);
  return (await res.json()) as SessionInfo;
};

/**
 * Who the caller is, and the API client that signs their requests: the session is read at boot
 * and after every sign-in or sign-out; a 401 from the API ends it and asks for a new sign-in.
 */
export const useSession = (boot: BootConfig) => {
  const credentials = useMemo(() => sessionCredentials(window.sessionStorage), []);
  const [session, setSession] = useState<SessionInfo>();
  const [loginReason, setLoginReason] = useState<string>();
  const [bootError, setBootError] = useState<string>();

  const refreshSession = useCallback(() => {
    fetchSession(boot, credentials.get())
      .then((s) => {
        setSession(s);
        setBootError(undefined);
      })
      .catch((e: unknown) => setBootError((e as Error).message));
  }, [boot, credentials]);
  useEffect(refreshSession, [refreshSession]);

  const api = useMemo(
    () =>
      new ApiClient({
        apiBase: boot.apiBase,
        credentials,
        withCookies: boot.oidc,
        onUnauthorized: () => {
          credentials.clear();
          setLoginReason('Your session has ended: sign in again.');
          setSession((s) => (s ? { ...s, authenticated: false } : s));
        },
      }),
    [boot, credentials],
  );

  /** Keeps credentials the login page has checked, and reads the session they open. */
  const signIn = (authorization: string) => {
    credentials.set(authorization);
    setLoginReason(undefined);
    refreshSession();
  };
  const signOut = async () => {
    credentials.clear();
    if (session?.via === 'oidc')
      await fetch(`${boot.basePath}/auth/logout`, { method: 'POST', credentials: 'same-origin' });
    setLoginReason(undefined);
    refreshSession();
  };

  return { api, credentials, session, loginReason, bootError, refreshSession, signIn, signOut };
};
