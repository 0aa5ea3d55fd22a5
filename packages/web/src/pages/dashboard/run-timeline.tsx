import type { ApiDashboardRun } from '@trellis/contract';
import { seg } from '../../api/client';
import { statusTone } from '../../lib/status';
import { formatTime } from '../../lib/time';
import { useRouter } from '../../router';

/** Most DAG rows drawn; the rest are counted below the chart. */
const MAX_ROWS = 40;

interface Row {
  readonly dag: string;
  readonly runs: ApiDashboardRun[];
}

const rowsOf = (runs: readonly ApiDashboardRun[]): Row[] => {
  const by = new Map<string, ApiDashboardRun[]>();
  for (const r of runs) by.set(r.name, [...(by.get(r.name) ?? []), r]);
  return [...by.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([dag, list]) => ({ dag, runs: list }));
};

/** Hour ticks across the range: every hour for a day, fewer for longer ranges. */
const ticksOf = (fromMs: number, toMs: number): number[] => {
  const hours = (toMs - fromMs) / 3_600_000;
  const step = hours <= 24 ? 3 : hours <= 72 ? 12 : 24 * Math.ceil(hours / 24 / 7);
  const out: number[] = [];
  const first = new Date(fromMs);
  first.setMinutes(0, 0, 0);
  for (let t = first.getTime(); t < toMs; t += step * 3_600_000) if (t >= fromMs) out.push(t);
  return out;
};

const Bar = ({
  r,
  fromMs,
  span,
  now,
}: {
  r: ApiDashboardRun;
  fromMs: number;
  span: number;
  now: number;
}) => {
  const start = Date.parse(r.startedAt || r.queuedAt);
  if (!Number.isFinite(start)) return null;
  const end = r.finishedAt ? Date.parse(r.finishedAt) : now;
  const left = Math.max(0, ((start - fromMs) / span) * 100);
  const width = Math.max(0.4, Math.min(100 - left, ((end - start) / span) * 100));
  const what = `${r.name} ${r.dagRunId}: ${r.statusLabel}, ${formatTime(r.startedAt || r.queuedAt)}`;
  const router = useRouter();
  const to = `/runs/${seg(r.name)}/${seg(r.dagRunId)}`;
  return (
    <a
      href={router.href(to)}
      onClick={(e) => {
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        router.navigate(to);
      }}
      className={`tl-bar status-${statusTone(r.status)}`}
      title={what}
      style={{ left: `${left}%`, width: `${width}%` }}
      data-run={r.dagRunId}
      aria-label={what}
    />
  );
};

/** The range's runs as bars, one row per DAG, from start (or queueing) to end (or now). */
export const RunTimeline = ({
  runs,
  fromMs,
  toMs,
  now,
}: {
  runs: readonly ApiDashboardRun[];
  fromMs: number;
  toMs: number;
  now: number;
}) => {
  const rows = rowsOf(runs);
  const span = Math.max(1, toMs - fromMs);
  if (rows.length === 0) return <p className="muted">No runs in this range.</p>;
  return (
    <div className="timeline" role="group" aria-label="Runs by DAG">
      <div className="tl-row tl-axis" aria-hidden="true">
        <span className="tl-label" />
        <span className="tl-track">
          {ticksOf(fromMs, toMs).map((t) => (
            <span key={t} className="tl-tick" style={{ left: `${((t - fromMs) / span) * 100}%` }}>
              {new Date(t).toLocaleString(undefined, {
                ...(toMs - fromMs > 86_400_000 ? { day: 'numeric', month: 'short' } : {}),
                hour: '2-digit',
                minute: '2-digit',
              })}
            </span>
          ))}
        </span>
      </div>
      {rows.slice(0, MAX_ROWS).map((row) => (
        <div key={row.dag} className="tl-row" data-dag={row.dag}>
          <span className="tl-label mono" title={row.dag}>
            {row.dag}
          </span>
          <span className="tl-track">
            {now >= fromMs && now <= toMs && (
              <span className="tl-now" style={{ left: `${((now - fromMs) / span) * 100}%` }} />
            )}
            {row.runs.map((r) => (
              <Bar key={r.dagRunId} r={r} fromMs={fromMs} span={span} now={now} />
            ))}
          </span>
        </div>
      ))}
      {rows.length > MAX_ROWS && (
        <p className="muted small">and {rows.length - MAX_ROWS} more DAGs (see Runs)</p>
      )}
    </div>
  );
};
