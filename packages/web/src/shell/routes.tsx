import { useEffect } from 'react';
import { DashboardPage } from '../pages/dashboard/dashboard-page';
import { DagListPage } from '../pages/dag-list/dag-list-page';
import { DagPage } from '../pages/dag/dag-page';
import { NewDagPage } from '../pages/new-dag/new-dag-page';
import { QueuesPage } from '../pages/queues-page';
import { RunPage } from '../pages/run/run-page';
import { RunsPage } from '../pages/runs/runs-page';
import { WorkersPage } from '../pages/workers-page';
import { Link, matchPath, useRouter } from '../router';

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
