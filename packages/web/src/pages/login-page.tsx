import { useState } from 'react';
import type { SessionInfo } from '@trellis/contract';
import { basicHeader, bearerHeader } from '../api/credentials';
import type { BootConfig } from '../boot-config';

/**
 * Sign-in: a user and password for Basic, a token for Bearer, and a button for OpenID Connect
 * when the server has it. The credentials are checked against the server before they are kept.
 */
export const LoginPage = ({
  boot,
  check,
  onDone,
  reason,
}: {
  boot: BootConfig;
  /** Asks the server who these credentials are; resolves with the session. */
  check: (authorization: string) => Promise<SessionInfo>;
  onDone: (authorization: string) => void;
  reason?: string;
}) => {
  const [method, setMethod] = useState<'basic' | 'bearer'>(
    boot.authMode === 'bearer' ? 'bearer' : 'basic',
  );
  const [user, setUser] = useState('');
  const [password, setPassword] = useState('');
  const [token, setToken] = useState('');
  const [error, setError] = useState(reason ?? '');
  const [busy, setBusy] = useState(false);
  const returnTo = window.location.pathname + window.location.search;

  const submit = async () => {
    setBusy(true);
    setError('');
    const header = method === 'basic' ? basicHeader(user, password) : bearerHeader(token);
    try {
      const s = await check(header);
      if (s.authenticated) onDone(header);
      else
        setError(
          method === 'basic' ? 'Wrong user name or password.' : 'The token was not accepted.',
        );
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="login">
      <form
        className="login-card"
        aria-label="Sign in"
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <h1>
          <span className="logo" aria-hidden="true" /> Trellis
        </h1>
        {boot.passwordLogin && (
          <div className="tabs" role="tablist">
            <button
              type="button"
              role="tab"
              aria-selected={method === 'basic'}
              className={method === 'basic' ? 'active' : undefined}
              onClick={() => setMethod('basic')}
            >
              User and password
            </button>
            <button
              type="button"
              role="tab"
              aria-selected={method === 'bearer'}
              className={method === 'bearer' ? 'active' : undefined}
              onClick={() => setMethod('bearer')}
            >
              Access token
            </button>
          </div>
        )}
        {error && (
          <div className="error-box" role="alert">
            {error}
          </div>
        )}
        {boot.passwordLogin &&
          (method === 'basic' ? (
            <>
              <label>
                User name
                <input
                  name="username"
                  autoComplete="username"
                  value={user}
                  onChange={(e) => setUser(e.target.value)}
                  required
                  autoFocus
                />
              </label>
              <label>
                Password
                <input
                  name="password"
                  type="password"
                  autoComplete="current-password"
                  value={password}
                  onChange={(e) => setPassword(e.target.value)}
                  required
                />
              </label>
            </>
          ) : (
            <label>
              Token
              <input
                name="token"
                type="password"
                value={token}
                onChange={(e) => setToken(e.target.value)}
                required
                autoFocus
              />
            </label>
          ))}
        {boot.passwordLogin && (
          <button type="submit" className="primary" disabled={busy}>
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
        )}
        {boot.oidc && (
          <a
            className="button"
            href={`${boot.basePath}/auth/oidc/login?returnTo=${encodeURIComponent(returnTo)}`}
          >
            Sign in with OpenID Connect
          </a>
        )}
      </form>
    </main>
  );
};
