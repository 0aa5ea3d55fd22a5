import type { ApiGridItem, ApiRunSummary } from '@trellis/contract';
import { seg } from '../api/client';
import { NODE_STATUS_LABEL, nodeTone, statusTone } from '../lib/status';
import { formatTime } from '../lib/time';
import { Link } from '../router';

/** The run history grid (`gridData`): a row per step, a column per run, newest on the left. */
export const RunGrid = ({
  runs,
  grid,
}: {
  runs: readonly ApiRunSummary[];
  grid: readonly ApiGridItem[];
}) => {
  if (runs.length === 0) return <p className="muted">No runs yet.</p>;
  return (
    <div className="table-wrap">
      <table className="grid" aria-label="Run history">
        <thead>
          <tr>
            <th scope="col">Step</th>
            {runs.map((r) => (
              <th key={r.dagRunId} scope="col">
                <Link
                  to={`/runs/${seg(r.name)}/${seg(r.dagRunId)}`}
                  className={`grid-run status-${statusTone(r.status)}`}
                  title={`${r.dagRunId}: ${r.statusLabel} ${formatTime(r.startedAt)}`}
                >
                  <span className="dot" />
                </Link>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {grid.map((row) => (
            <tr key={row.name}>
              <th scope="row" className="grid-step">
                {row.name}
              </th>
              {runs.map((r, i) => {
                const s = row.history[i];
                return (
                  <td key={r.dagRunId}>
                    {s !== undefined && (
                      <span
                        className={`cell status-${nodeTone(s)}`}
                        title={`${row.name}: ${NODE_STATUS_LABEL[s] ?? s} (${r.dagRunId})`}
                      />
                    )}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
};
