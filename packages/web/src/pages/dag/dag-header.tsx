import type { DagDetailsResponse } from '@trellis/contract';
import { seg } from '../../api/client';
import { deniedTitle, useApp, useCan } from '../../app-context';
import { StatusBadge } from '../../components/status-badge';
import { Link } from '../../router';

export type DagDialog = 'start' | 'enqueue' | 'rename' | 'delete' | 'stop-all';

/** Start, enqueue, stop all, suspend or resume, rename, delete: each disabled when not allowed. */
const DagButtons = ({
  d,
  running,
  onDialog,
  onToggleSuspend,
}: {
  d: DagDetailsResponse | undefined;
  running: boolean;
  onDialog: (dialog: DagDialog) => void;
  onToggleSuspend: () => void;
}) => {
  const { session } = useApp();
  const canRun = useCan('runs:write');
  const canEdit = useCan('dags:write');
  return (
    <div className="actions">
      <button
        type="button"
        className="primary"
        disabled={!canRun || !d}
        title={canRun ? undefined : deniedTitle(session, 'start runs')}
        onClick={() => onDialog('start')}
      >
        Start
      </button>
      <button
        type="button"
        disabled={!canRun || !d}
        title={canRun ? undefined : deniedTitle(session, 'enqueue runs')}
        onClick={() => onDialog('enqueue')}
      >
        Enqueue
      </button>
      <button
        type="button"
        disabled={!canRun || !running}
        title={canRun ? 'Stop every running run of this DAG' : deniedTitle(session, 'stop runs')}
        onClick={() => onDialog('stop-all')}
      >
        Stop all
      </button>
      <button
        type="button"
        disabled={!canRun || !d}
        title={canRun ? undefined : deniedTitle(session, 'suspend DAGs')}
        onClick={onToggleSuspend}
      >
        {d?.suspended ? 'Resume' : 'Suspend'}
      </button>
      <button
        type="button"
        disabled={!canEdit}
        title={canEdit ? undefined : deniedTitle(session, 'rename DAGs')}
        onClick={() => onDialog('rename')}
      >
        Rename
      </button>
      <button
        type="button"
        className="danger"
        disabled={!canEdit}
        title={canEdit ? undefined : deniedTitle(session, 'delete DAGs')}
        onClick={() => onDialog('delete')}
      >
        Delete
      </button>
    </div>
  );
};

/** The DAG's name, latest run status and suspension, and its action buttons. */
export const DagHeader = ({
  dagName,
  d,
  running,
  onDialog,
  onToggleSuspend,
}: {
  dagName: string;
  d: DagDetailsResponse | undefined;
  running: boolean;
  onDialog: (dialog: DagDialog) => void;
  onToggleSuspend: () => void;
}) => (
  <header className="page-head">
    <h1>{dagName}</h1>
    {d && d.latestDAGRun.dagRunId && (
      <Link to={`/runs/${seg(dagName)}/${seg(d.latestDAGRun.dagRunId)}`}>
        <StatusBadge status={d.latestDAGRun.status} label={d.latestDAGRun.statusLabel} />
      </Link>
    )}
    {d?.suspended && <span className="badge status-cancelled">suspended</span>}
    <span className="spacer" />
    <DagButtons d={d} running={running} onDialog={onDialog} onToggleSuspend={onToggleSuspend} />
  </header>
);
