import { AppContext, type AppValue } from './app-context';
import type { BootConfig } from './boot-config';
import { LoginPage } from './pages/login-page';
import { Routes } from './shell/routes';
import { fetchSession, useSession } from './shell/session';
import { Sidebar } from './shell/sidebar';
import { Toasts, useToasts } from './shell/toasts';

const BootError = ({ message, onRetry }: { message: string; onRetry: () => void }) => (
  <main className="login">
    <div className="login-card error-box" role="alert">
      Cannot reach the Trellis server: {message}
      <button type="button" onClick={onRetry}>
        Try again
      </button>
    </div>
  </main>
);

/** The app: the sign-in page until there is a session, then the shell around the routed page. */
export const App = ({ boot }: { boot: BootConfig }) => {
  const { api, credentials, session, loginReason, bootError, refreshSession, signIn, signOut } =
    useSession(boot);
  const { toasts, toast } = useToasts();

  if (bootError) return <BootError message={bootError} onRetry={refreshSession} />;
  if (!session) return <main className="login muted">Loading…</main>;
  if (!session.authenticated)
    return (
      <LoginPage
        boot={boot}
        {...(loginReason ? { reason: loginReason } : {})}
        check={(h) => fetchSession(boot, h)}
        onDone={signIn}
      />
    );

  const value: AppValue = { api, boot, credentials, session, refreshSession, toast };
  return (
    <AppContext.Provider value={value}>
      <a href="#main" className="skip-link">
        Skip to content
      </a>
      <div className="shell">
        <Sidebar session={session} signOut={signOut} />
        <main className="content" id="main" tabIndex={-1}>
          <Routes />
        </main>
      </div>
      <Toasts toasts={toasts} />
    </AppContext.Provider>
  );
};
