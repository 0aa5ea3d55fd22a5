import type { ApiDagListItem } from '@trellis/contract';
import { seg } from '../../api/client';
import { deniedTitle, useApp, useCan } from '../../app-context';
import { StatusBadge } from '../../components/status-badge';
import { cronOf, cronWords } from '../../lib/cron-words';
import { TimeText } from '../../components/time-text';
import { Link } from '../../router';

export type StartMode = 'start' | 'enqueue';

/** What a row does: filter by a tag, suspend or resume, open the start dialog. */
export interface DagRowActions {
  onTag: (tag: string) => void;
  onSuspend: (fileName: string, suspend: boolean) => void;
  onStart: (fileName: string, mode: StartMode) => void;
}

const NameCell = ({ d, onTag }: { d: ApiDagListItem; onTag: (tag: string) => void }) => (
  <td>
    <Link to={`/dags/${seg(d.fileName)}`} className="strong">
      {d.dag.name || d.fileName}
    </Link>
    {d.dag.description && <div className="muted small">{d.dag.description}</div>}
    <div className="tags">
      {d.dag.tags.map((t) => (
        <button key={t} type="button" className="tag" onClick={() => onTag(t)}>
          {t}
        </button>
      ))}
      {d.errors.length > 0 && (
        <span className="tag tag-error" title={d.errors.join('\n')}>
          {d.errors.length} problem{d.errors.length > 1 ? 's' : ''}
        </span>
      )}
    </div>
  </td>
);

const LatestRunCell = ({ d }: { d: ApiDagListItem }) => (
  <td>
    {d.latestDAGRun.dagRunId ? (
      <Link to={`/runs/${seg(d.dag.name)}/${seg(d.latestDAGRun.dagRunId)}`}>
        <StatusBadge status={d.latestDAGRun.status} label={d.latestDAGRun.statusLabel} />
      </Link>
    ) : (
      <span className="muted">never run</span>
    )}
    <div className="muted small">
      <TimeText iso={d.latestDAGRun.startedAt} />
    </div>
  </td>
);

const NextRunCell = ({ d }: { d: ApiDagListItem }) => (
  <td className="hide-narrow small">
    {d.suspended ? (
      <span className="muted">suspended</span>
    ) : d.nextRun ? (
      <TimeText iso={d.nextRun} />
    ) : d.dag.schedule.length > 0 ? (
      <span className="muted">scheduled</span>
    ) : (
      <span className="muted">—</span>
    )}
  </td>
);

const ActiveCell = ({
  d,
  onSuspend,
}: {
  d: ApiDagListItem;
  onSuspend: DagRowActions['onSuspend'];
}) => {
  const { session } = useApp();
  const canRun = useCan('runs:write');
  return (
    <td>
      <label className="switch" title={canRun ? undefined : deniedTitle(session, 'suspend DAGs')}>
        <input
          type="checkbox"
          role="switch"
          aria-label={`${d.fileName} active (not suspended)`}
          checked={!d.suspended}
          disabled={!canRun}
          onChange={(e) => onSuspend(d.fileName, !e.target.checked)}
        />
        <span className="slider" />
      </label>
    </td>
  );
};

const ActionsCell = ({ d, onStart }: { d: ApiDagListItem; onStart: DagRowActions['onStart'] }) => {
  const { session } = useApp();
  const canRun = useCan('runs:write');
  return (
    <td className="actions">
      <button
        type="button"
        className="primary small"
        disabled={!canRun}
        title={canRun ? `Start ${d.fileName}` : deniedTitle(session, 'start runs')}
        onClick={() => onStart(d.fileName, 'start')}
      >
        Start
      </button>
      <button
        type="button"
        className="small"
        disabled={!canRun}
        title={canRun ? `Enqueue ${d.fileName}` : deniedTitle(session, 'enqueue runs')}
        onClick={() => onStart(d.fileName, 'enqueue')}
      >
        Enqueue
      </button>
    </td>
  );
};

/** One DAG of the list: name and tags, schedule, latest and next run, active switch, actions. */
export const DagRow = ({ d, actions }: { d: ApiDagListItem; actions: DagRowActions }) => (
  <tr data-dag={d.fileName}>
    <NameCell d={d} onTag={actions.onTag} />
    <td className="hide-narrow small">
      {d.dag.schedule.map((s) => (
        <span key={s.expression} className="schedule-words" title={s.expression}>
          {cronWords(cronOf(s.expression))}
        </span>
      ))}
      {d.dag.schedule.length === 0 && <span className="muted">—</span>}
    </td>
    <LatestRunCell d={d} />
    <NextRunCell d={d} />
    <ActiveCell d={d} onSuspend={actions.onSuspend} />
    <ActionsCell d={d} onStart={actions.onStart} />
  </tr>
);
