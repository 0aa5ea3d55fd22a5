import type { ApiNode } from '@trellis/contract';
import { deniedTitle, useApp, useCan } from '../../app-context';
import { StatusBadge } from '../../components/status-badge';
import { NODE_STATUS_LABEL } from '../../lib/status';
import { elapsed, formatDuration } from '../../lib/time';
import { TimeText } from '../../components/time-text';
import { Link } from '../../router';

export type Stream = 'stdout' | 'stderr';

/** What a step row does: show a log stream, set the step's status. */
export interface StepRowActions {
  onLog: (step: string, stream: Stream) => void;
  onSetStatus: (step: string, status: number) => void;
}

/** The step's name, its error, and the child runs it started. */
const StepNameCell = ({
  n,
  childLink,
}: {
  n: ApiNode;
  childLink: (childRunId: string) => string;
}) => (
  <td>
    <span className="strong">{n.step.name}</span>
    {n.error && <div className="error-text small">{n.error}</div>}
    {[...n.children, ...n.childrenRepeated].map((c) => (
      <div key={c.dagRunId} className="small">
        ↳ <Link to={childLink(c.dagRunId)}>{c.name || n.step.run || 'child run'}</Link>{' '}
        {c.statusLabel && <StatusBadge status={c.status} label={c.statusLabel} />}
      </div>
    ))}
  </td>
);

const LogButtonsCell = ({ step, onLog }: { step: string; onLog: StepRowActions['onLog'] }) => (
  <td className="nowrap">
    <button type="button" className="small" onClick={() => onLog(step, 'stdout')}>
      stdout
    </button>
    <button type="button" className="small" onClick={() => onLog(step, 'stderr')}>
      stderr
    </button>
  </td>
);

/** Marks a step (e.g. to retry from it); only allowed while the run is not running. */
const SetStatusCell = ({
  step,
  live,
  onSetStatus,
}: {
  step: string;
  live: boolean;
  onSetStatus: StepRowActions['onSetStatus'];
}) => {
  const { session } = useApp();
  const canRun = useCan('runs:write');
  return (
    <td className="hide-narrow">
      <select
        aria-label={`Set status of ${step}`}
        value=""
        disabled={!canRun || live}
        title={
          !canRun
            ? deniedTitle(session, 'change step status')
            : live
              ? 'Only when the run is not running'
              : 'Mark this step, e.g. to retry from it'
        }
        onChange={(e) => {
          if (e.target.value !== '') onSetStatus(step, Number(e.target.value));
        }}
      >
        <option value="">—</option>
        {[0, 2, 3, 4, 5].map((s) => (
          <option key={s} value={s}>
            {NODE_STATUS_LABEL[s]}
          </option>
        ))}
      </select>
    </td>
  );
};

const StepRow = ({
  n,
  now,
  live,
  childLink,
  actions,
}: {
  n: ApiNode;
  now: number;
  live: boolean;
  childLink: (childRunId: string) => string;
  actions: StepRowActions;
}) => (
  <tr data-step={n.step.name}>
    <StepNameCell n={n} childLink={childLink} />
    <td>
      <StatusBadge status={n.status} label={n.statusLabel} node />
    </td>
    <td className="hide-narrow small">
      <TimeText iso={n.startedAt} />
    </td>
    <td className="small">{formatDuration(elapsed(n.startedAt, n.finishedAt, now))}</td>
    <td className="hide-narrow small">
      {n.retryCount} / {n.doneCount}
    </td>
    <LogButtonsCell step={n.step.name} onLog={actions.onLog} />
    <SetStatusCell step={n.step.name} live={live} onSetStatus={actions.onSetStatus} />
  </tr>
);

/** The run's steps (handlers last): status, times, retries, log buttons, and set status. */
export const StepsPanel = ({
  nodes,
  now,
  live,
  childLink,
  actions,
}: {
  nodes: readonly ApiNode[];
  now: number;
  live: boolean;
  childLink: (childRunId: string) => string;
  actions: StepRowActions;
}) => (
  <div className="panel">
    <h2>Steps</h2>
    {nodes.length === 0 ? (
      <p className="muted">This run has no steps.</p>
    ) : (
      <div className="table-wrap">
        <table className="table" aria-label="Steps">
          <thead>
            <tr>
              <th>Step</th>
              <th>Status</th>
              <th className="hide-narrow">Started</th>
              <th>Duration</th>
              <th className="hide-narrow" title="retries / completed repeats">
                Retries / done
              </th>
              <th>Logs</th>
              <th className="hide-narrow">Set status</th>
            </tr>
          </thead>
          <tbody>
            {nodes.map((n) => (
              <StepRow
                key={n.step.name}
                n={n}
                now={now}
                live={live}
                childLink={childLink}
                actions={actions}
              />
            ))}
          </tbody>
        </table>
      </div>
    )}
  </div>
);
