import type { SessionInfo } from '@trellis/contract';
import { SystemPanel } from '../components/system-panel';
import { Link, useRouter } from '../router';

const NavLink = ({ to, label }: { to: string; label: string }) => {
  const { path } = useRouter();
  const active = to === '/' ? path === '/' || path === '/dashboard' : path.startsWith(to);
  return (
    <Link to={to} className={active ? 'nav-link active' : 'nav-link'}>
      {label}
    </Link>
  );
};

const UserBox = ({ session, signOut }: { session: SessionInfo; signOut: () => Promise<void> }) => (
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
);

/** The left column: brand, main navigation, system health, and who is signed in. */
export const Sidebar = ({
  session,
  signOut,
}: {
  session: SessionInfo;
  signOut: () => Promise<void>;
}) => (
  <aside className="sidebar">
    <Link to="/" className="brand">
      <span className="logo" aria-hidden="true" /> Trellis
    </Link>
    <nav aria-label="Main">
      <NavLink to="/" label="Dashboard" />
      <NavLink to="/dags" label="DAGs" />
      <NavLink to="/runs" label="Runs" />
      <NavLink to="/queues" label="Queues" />
      <NavLink to="/workers" label="Workers" />
    </nav>
    <SystemPanel />
    <UserBox session={session} signOut={signOut} />
  </aside>
);
