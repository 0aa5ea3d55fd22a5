import type { ApiNode } from '@trellis/contract';
import { nodeTone } from '../lib/status';
import { formatDuration } from '../lib/time';

/** A timeline of the steps: one bar per started step, on the run's time scale. */
export const Gantt = ({
  nodes,
  runStart,
  runEnd,
  now,
}: {
  nodes: readonly ApiNode[];
  runStart: string;
  runEnd: string;
  now: number;
}) => {
  // A DAG may have no steps (docs/decisions.md): its run is done without any.
  if (nodes.length === 0) return <p className="muted">This run has no steps.</p>;
  const started = nodes.filter((n) => n.startedAt);
  if (!runStart || started.length === 0) return <p className="muted">No step has started yet.</p>;
  const t0 = Date.parse(runStart);
  const tEnd = Math.max(
    runEnd ? Date.parse(runEnd) : now,
    ...started.map((n) => (n.finishedAt ? Date.parse(n.finishedAt) : now)),
  );
  const span = Math.max(1, tEnd - t0);
  return (
    <div className="gantt" role="list" aria-label="Timeline">
      {started.map((n) => {
        const s = Date.parse(n.startedAt) - t0;
        const e = (n.finishedAt ? Date.parse(n.finishedAt) : now) - t0;
        const left = Math.max(0, (s / span) * 100);
        const width = Math.max(0.5, ((e - s) / span) * 100);
        return (
          <div key={n.step.name} className="gantt-row" role="listitem">
            <span className="gantt-name" title={n.step.name}>
              {n.step.name}
            </span>
            <span className="gantt-track">
              <span
                className={`gantt-bar status-${nodeTone(n.status)}`}
                style={{ left: `${left}%`, width: `${Math.min(width, 100 - left)}%` }}
                title={`${n.step.name}: ${formatDuration(e - s)}`}
              />
            </span>
            <span className="gantt-time small muted">{formatDuration(e - s)}</span>
          </div>
        );
      })}
      <div className="gantt-row gantt-axis small muted">
        <span className="gantt-name" />
        <span className="gantt-track">
          <span>0s</span>
          <span style={{ float: 'right' }}>{formatDuration(span)}</span>
        </span>
        <span className="gantt-time" />
      </div>
    </div>
  );
};
