import type { DagRunsResponse } from '@trellis/contract';
import { seg } from '../../api/client';
import { ErrorBox } from '../../components/error-box';
import { RunGrid } from '../../components/run-grid';
import { StatusBadge } from '../../components/status-badge';
import { TimeText } from '../../components/time-text';
import type { PollState } from '../../lib/use-poll';
import { Link } from '../../router';

const RunsTable = ({ runs }: { runs: DagRunsResponse['dagRuns'] }) => (
  <table className="table" aria-label="Runs">
    <thead>
      <tr>
        <th>Run</th>
        <th>Status</th>
        <th className="hide-narrow">Started</th>
        <th className="hide-narrow">Finished</th>
      </tr>
    </thead>
    <tbody>
      {runs.map((r) => (
        <tr key={r.dagRunId}>
          <td className="mono">
            <Link to={`/runs/${seg(r.name)}/${seg(r.dagRunId)}`}>{r.dagRunId}</Link>
          </td>
          <td>
            <StatusBadge status={r.status} label={r.statusLabel} />
          </td>
          <td className="hide-narrow">
            <TimeText iso={r.startedAt} />
          </td>
          <td className="hide-narrow">
            <TimeText iso={r.finishedAt} />
          </td>
        </tr>
      ))}
    </tbody>
  </table>
);

/** The History tab: the status grid of recent runs, then the runs one per row. */
export const HistoryPanel = ({ history }: { history: PollState<DagRunsResponse> }) =>
  history.error ? (
    <ErrorBox error={history.error} what="reading the history" />
  ) : history.data ? (
    <>
      <RunGrid runs={history.data.dagRuns} grid={history.data.gridData} />
      <RunsTable runs={history.data.dagRuns} />
    </>
  ) : (
    <p className="muted">Loading…</p>
  );
