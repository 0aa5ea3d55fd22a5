import { useCallback, useEffect, useMemo, useState } from 'react';
import type { SessionInfo } from '@trellis/contract';
import { ApiClient } from './api/client';
import { sessionCredentials } from './api/credentials';
import { AppContext, type AppValue } from './app-context';
import type { BootConfig } from './boot-config';
import { SystemPanel } from './components/system-panel';
import { DagListPage } from './pages/dag-list-page';
import { DagPage } from './pages/dag-page';
import { LoginPage } from './pages/login-page';
import { QueuesPage } from './pages/queues-page';
import { RunPage } from './pages/run-page';
import { WorkersPage } from './pages/workers-page';
import { Link, matchPath, useRouter } from './router';

/** Asks the server who the caller is (`<basePath>/auth/session`). */
const fetchSession = async (
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

/** The tab title for an app path: the DAG or run in view first. */
export const titleFor = (path: string): string => {
  const [first, name] = path
    .split('/')
    .filter(Boolean)
    .map((p) => decodeURIComponent(p));
  const page =
    first === 'dags' && name
      ? name
      : first === 'runs' && name
        ? `${name} run`
        : first === 'queues'
          ? 'Queues'
          : first === 'workers'
            ? 'Workers'
            : 'DAGs';
  return `${page} · Trellis`;
};

const Routes = () => {
  const { path } = useRouter();
  useEffect(() => {
    document.title = titleFor(path);
  }, [path]);
  let m: Record<string, string> | undefined;
  if (path === '/' || path === '/dags') return <DagListPage />;
  if ((m = matchPath('/dags/:fileName', path)))
    return <DagPage key={m.fileName} fileName={m.fileName ?? ''} />;
  if ((m = matchPath('/runs/:name/:id', path)))
    return <RunPage key={path} name={m.name ?? ''} dagRunId={m.id ?? ''} />;
  if ((m = matchPath('/runs/:name/:id/children/:child', path)))
    return <RunPage key={path} name={m.name ?? ''} dagRunId={m.id ?? ''} childId={m.child ?? ''} />;
  if (path === '/queues') return <QueuesPage />;
  if (path === '/workers') return <WorkersPage />;
  return (
    <section className="page">
      <h1>Not found</h1>
      <p>
        Nothing lives at <code>{path}</code>. <Link to="/dags">Back to the DAGs</Link>.
      </p>
    </section>
  );
};

const NavLink = ({ to, label }: { to: string; label: string }) => {
  const { path } = useRouter();
  const active =
    to === '/dags'
      ? path === '/' || path.startsWith('/dags') || path.startsWith('/runs')
      : path.startsWith(to);
  return (
    <Link to={to} className={active ? 'nav-link active' : 'nav-link'}>
      {label}
    </Link>
  );
};

export const App = ({ boot }: { boot: BootConfig }) => {
  const credentials = useMemo(() => sessionCredentials(window.sessionStorage), []);
  const [session, setSession] = useState<SessionInfo>();
  const [loginReason, setLoginReason] = useState<string>();
  const [toasts, setToasts] = useState<{ id: number; text: string; tone: 'ok' | 'error' }[]>([]);
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

  const toast = useCallback((text: string, tone: 'ok' | 'error' = 'ok') => {
    const id = Math.random();
    setToasts((t) => [...t, { id, text, tone }]);
    window.setTimeout(
      () => setToasts((t) => t.filter((x) => x.id !== id)),
      tone === 'error' ? 7000 : 3500,
    );
  }, []);

  if (bootError)
    return (
      <main className="login">
        <div className="login-card error-box" role="alert">
          Cannot reach the Trellis server: {bootError}
          <button type="button" onClick={refreshSession}>
            Try again
          </button>
        </div>
      </main>
    );
  if (!session) return <main className="login muted">Loading…</main>;
  if (!session.authenticated)
    return (
      <LoginPage
        boot={boot}
        {...(loginReason ? { reason: loginReason } : {})}
        check={(h) => fetchSession(boot, h)}
        onDone={(h) => {
          credentials.set(h);
          setLoginReason(undefined);
          refreshSession();
        }}
      />
    );

  const value: AppValue = { api, boot, credentials, session, refreshSession, toast };
  const signOut = async () => {
    credentials.clear();
    if (session.via === 'oidc')
      await fetch(`${boot.basePath}/auth/logout`, { method: 'POST', credentials: 'same-origin' });
    setLoginReason(undefined);
    refreshSession();
  };
  return (
    <AppContext.Provider value={value}>
      <div className="shell">
        <aside className="sidebar">
          <Link to="/dags" className="brand">
            <span className="logo" aria-hidden="true" /> Trellis
          </Link>
          <nav aria-label="Main">
            <NavLink to="/dags" label="DAGs" />
            <NavLink to="/queues" label="Queues" />
            <NavLink to="/workers" label="Workers" />
          </nav>
          <SystemPanel />
          <div className="user small">
            {session.via !== 'none' ? (
              <>
                <span>
                  {session.name} <span className="muted">({session.role})</span>
                </span>
                <button type="button" className="link" onClick={() => void signOut()}>
                  Sign out
                </button>
              </>
            ) : (
              <span className="muted">No authentication</span>
            )}
          </div>
        </aside>
        <main className="content">
          <Routes />
        </main>
      </div>
      <div className="toasts" aria-live="polite">
        {toasts.map((t) => (
          <div
            key={t.id}
            className={`toast ${t.tone}`}
            role={t.tone === 'error' ? 'alert' : 'status'}
          >
            {t.text}
          </div>
        ))}
      </div>
    </AppContext.Provider>
  );
};
