import type { ApiRunDetails } from '@trellis/contract';
import { seg } from '../../api/client';
import { deniedTitle, useApp, useCan } from '../../app-context';
import { StatusBadge } from '../../components/status-badge';
import { Link } from '../../router';

export type RunConfirm = 'stop' | 'retry' | 'dequeue';

/** DAGs / the DAG / (for a child run: the run that called it) / the run id. */
export const RunCrumbs = ({
  r,
  name,
  childId,
  childLink,
}: {
  r: ApiRunDetails;
  name: string;
  childId: string | undefined;
  childLink: (childRunId: string) => string;
}) => (
  <nav className="crumbs" aria-label="Breadcrumb">
    <Link to="/dags">DAGs</Link> /{' '}
    <Link to={`/dags/${seg(childId ? r.name : name)}`}>{r.name}</Link>
    {childId && (
      <>
        {' '}
        / called by{' '}
        <Link
          to={
            r.parentDAGRunId && r.parentDAGRunId !== r.rootDAGRunId
              ? childLink(r.parentDAGRunId)
              : `/runs/${seg(r.rootDAGRunName)}/${seg(r.rootDAGRunId)}`
          }
        >
          {r.parentDAGRunName || r.rootDAGRunName}
        </Link>
      </>
    )}{' '}
    / <span className="mono">{r.dagRunId}</span>
  </nav>
);

/** Stop while running, dequeue while queued, retry once finished. */
const RunButtons = ({
  r,
  live,
  onConfirm,
}: {
  r: ApiRunDetails;
  live: boolean;
  onConfirm: (confirm: RunConfirm) => void;
}) => {
  const { session } = useApp();
  const canRun = useCan('runs:write');
  return (
    <div className="actions">
      {r.status === 1 && (
        <button
          type="button"
          className="danger"
          disabled={!canRun}
          title={canRun ? 'Stop this run' : deniedTitle(session, 'stop runs')}
          onClick={() => onConfirm('stop')}
        >
          Stop
        </button>
      )}
      {r.status === 5 && (
        <button
          type="button"
          disabled={!canRun}
          title={canRun ? 'Take this run off its queue' : deniedTitle(session, 'dequeue runs')}
          onClick={() => onConfirm('dequeue')}
        >
          Dequeue
        </button>
      )}
      {!live && (
        <button
          type="button"
          className="primary"
          disabled={!canRun}
          title={canRun ? 'Retry as a new run' : deniedTitle(session, 'retry runs')}
          onClick={() => onConfirm('retry')}
        >
          Retry
        </button>
      )}
    </div>
  );
};

/** The run's name, id and status; a top-level run's actions. */
export const RunHeader = ({
  r,
  live,
  childId,
  onConfirm,
}: {
  r: ApiRunDetails;
  live: boolean;
  childId: string | undefined;
  onConfirm: (confirm: RunConfirm) => void;
}) => (
  <header className="page-head">
    <h1>
      {r.name} <span className="muted mono small">{r.dagRunId}</span>
    </h1>
    <StatusBadge status={r.status} label={r.statusLabel} />
    <span className="spacer" />
    {!childId && <RunButtons r={r} live={live} onConfirm={onConfirm} />}
  </header>
);
