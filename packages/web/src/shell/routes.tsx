import { lazy, Suspense, useEffect, type ReactNode } from 'react';
import { DashboardPage } from '../pages/dashboard/dashboard-page';
import { Link, matchPath, useRouter } from '../router';

/** The dashboard is in the first bundle; the other pages come in one lazy chunk (lazy-pages.ts). */
const pages = () => import('./lazy-pages');
const DagListPage = lazy(() => pages().then((m) => ({ default: m.DagListPage })));
const DagPage = lazy(() => pages().then((m) => ({ default: m.DagPage })));
const NewDagPage = lazy(() => pages().then((m) => ({ default: m.NewDagPage })));
const QueuesPage = lazy(() => pages().then((m) => ({ default: m.QueuesPage })));
const RunPage = lazy(() => pages().then((m) => ({ default: m.RunPage })));
const RunsPage = lazy(() => pages().then((m) => ({ default: m.RunsPage })));
const WorkersPage = lazy(() => pages().then((m) => ({ default: m.WorkersPage })));

const Loading = () => (
  <section className="page">
    <p className="muted" role="status">
      Loading…
    </p>
  </section>
);

/** The tab title for an app path: the DAG or run in view first. */
export const titleFor = (path: string): string => {
  const [first, name] = path
    .split('/')
    .filter(Boolean)
    .map((p) => decodeURIComponent(p));
  const titles: Record<string, string> = {
    '': 'Dashboard',
    dashboard: 'Dashboard',
    runs: 'Runs',
    queues: 'Queues',
    workers: 'Workers',
    'new-dag': 'New DAG',
  };
  const page =
    first === 'dags' && name
      ? name
      : first === 'runs' && name
        ? `${name} run`
        : (titles[first ?? ''] ?? 'DAGs');
  return `${page} · Trellis`;
};

/** The page for the current path (and the tab title that names it). */
export const Routes = () => {
  const { path } = useRouter();
  useEffect(() => {
    document.title = titleFor(path);
  }, [path]);
  return <Suspense fallback={<Loading />}>{pageFor(path)}</Suspense>;
};

const pageFor = (path: string): ReactNode => {
  let m: Record<string, string> | undefined;
  if (path === '/' || path === '/dashboard') return <DashboardPage />;
  if (path === '/runs') return <RunsPage />;
  if (path === '/dags') return <DagListPage />;
  if (path === '/new-dag') return <NewDagPage />;
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
