import { useState } from 'react';
import type { SessionInfo } from '@trellis/contract';
import { basicHeader, bearerHeader } from '../api/credentials';
import type { BootConfig } from '../boot-config';

type Method = 'basic' | 'bearer';

/** The sign-in form's fields, and `submit`, which checks them with the server before `onDone`. */
const useLoginForm = (
  boot: BootConfig,
  check: (authorization: string) => Promise<SessionInfo>,
  onDone: (authorization: string) => void,
  reason: string | undefined,
) => {
  const [method, setMethod] = useState<Method>(boot.authMode === 'bearer' ? 'bearer' : 'basic');
  const [user, setUser] = useState('');
  const [password, setPassword] = useState('');
  const [token, setToken] = useState('');
  const [error, setError] = useState(reason ?? '');
  const [busy, setBusy] = useState(false);

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

  return {
    method,
    setMethod,
    user,
    setUser,
    password,
    setPassword,
    token,
    setToken,
    error,
    busy,
    submit,
  };
};
type LoginForm = ReturnType<typeof useLoginForm>;

const MethodTab = ({ form, method, label }: { form: LoginForm; method: Method; label: string }) => (
  <button
    type="button"
    role="tab"
    aria-selected={form.method === method}
    className={form.method === method ? 'active' : undefined}
    onClick={() => form.setMethod(method)}
  >
    {label}
  </button>
);

const PasswordFields = ({ form }: { form: LoginForm }) => (
  <>
    <label>
      User name
      <input
        name="username"
        autoComplete="username"
        value={form.user}
        onChange={(e) => form.setUser(e.target.value)}
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
        value={form.password}
        onChange={(e) => form.setPassword(e.target.value)}
        required
      />
    </label>
  </>
);

const TokenField = ({ form }: { form: LoginForm }) => (
  <label>
    Token
    <input
      name="token"
      type="password"
      value={form.token}
      onChange={(e) => form.setToken(e.target.value)}
      required
      autoFocus
    />
  </label>
);

/** User and password or token, and the button that sends them. */
const PasswordLogin = ({ form }: { form: LoginForm }) => (
  <>
    {form.method === 'basic' ? <PasswordFields form={form} /> : <TokenField form={form} />}
    <button type="submit" className="primary" disabled={form.busy}>
      {form.busy ? 'Signing in…' : 'Sign in'}
    </button>
  </>
);

const OidcLogin = ({ basePath }: { basePath: string }) => {
  const returnTo = window.location.pathname + window.location.search;
  return (
    <a
      className="button"
      href={`${basePath}/auth/oidc/login?returnTo=${encodeURIComponent(returnTo)}`}
    >
      Sign in with OpenID Connect
    </a>
  );
};

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
  const form = useLoginForm(boot, check, onDone, reason);
  return (
    <main className="login">
      <form
        className="login-card"
        aria-label="Sign in"
        onSubmit={(e) => {
          e.preventDefault();
          void form.submit();
        }}
      >
        <h1>
          <span className="logo" aria-hidden="true" /> Trellis
        </h1>
        {boot.passwordLogin && (
          <div className="tabs" role="tablist">
            <MethodTab form={form} method="basic" label="User and password" />
            <MethodTab form={form} method="bearer" label="Access token" />
          </div>
        )}
        {form.error && (
          <div className="error-box" role="alert">
            {form.error}
          </div>
        )}
        {boot.passwordLogin && <PasswordLogin form={form} />}
        {boot.oidc && <OidcLogin basePath={boot.basePath} />}
      </form>
    </main>
  );
};
