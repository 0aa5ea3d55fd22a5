import { RUN_STATUS_LABEL } from '../../lib/status';
import type { DashboardResponse } from '@trellis/contract';
import { useApp } from '../../app-context';
import { ErrorBox } from '../../components/error-box';
import { addDays, browserZone, dayStartMs, daysToUnix } from '../../lib/date-range';
import { statusTone } from '../../lib/status';
import { useLive } from '../../lib/use-live';
import { useNow } from '../../lib/use-poll';
import { Link, useRouter } from '../../router';
import { DASHBOARD_PATH, dashboardQuery, dashboardRange } from './dashboard-query';
import { NextFiresCard, QueuesCard, WorkersCard } from './fleet-cards';
import { RunTimeline } from './run-timeline';

/** The range in the URL (`?from=YYYY-MM-DD&to=YYYY-MM-DD`, browser's zone); default today. */
const useDayRange = () => {
  const router = useRouter();
  const { from, to, today } = dashboardRange(router.search);
  const set = (f: string, t: string) => {
    const p = new URLSearchParams(router.search);
    p.set('from', f);
    p.set('to', t);
    router.navigate(`/dashboard?${p.toString()}`, { replace: true });
  };
  return { from, to, today, set };
};

const RangePicker = ({ r }: { r: ReturnType<typeof useDayRange> }) => {
  const days = Math.round((dayStartMs(r.to) - dayStartMs(r.from)) / 86_400_000);
  const shift = (n: number) => r.set(addDays(r.from, n), addDays(r.to, n));
  return (
    <div className="toolbar" role="group" aria-label="Range">
      <button type="button" onClick={() => shift(-(days + 1))} aria-label="Earlier">
        ‹
      </button>
      <label>
        From{' '}
        <input
          type="date"
          value={r.from}
          onChange={(e) =>
            e.target.value && r.set(e.target.value, r.to < e.target.value ? e.target.value : r.to)
          }
        />
      </label>
      <label>
        to{' '}
        <input
          type="date"
          value={r.to}
          min={r.from}
          onChange={(e) => e.target.value && r.set(r.from, e.target.value)}
        />
      </label>
      <button type="button" onClick={() => shift(days + 1)} aria-label="Later">
        ›
      </button>
      <button
        type="button"
        onClick={() => r.set(r.today, r.today)}
        disabled={r.from === r.today && r.to === r.today}
      >
        Today
      </button>
      <span className="small muted">{browserZone()}</span>
    </div>
  );
};

const Counts = ({ d, from, to }: { d: DashboardResponse; from: string; to: string }) => (
  <div className="dash-counts" role="list" aria-label="Runs by status">
    <Link to={`/runs?from=${from}&to=${to}`} className="dash-count">
      <strong data-testid="count-total">{d.total}</strong> runs
    </Link>
    {Object.entries(RUN_STATUS_LABEL).map(([status, label]) => (
      <Link
        key={status}
        to={`/runs?status=${status}&from=${from}&to=${to}`}
        className={`dash-count status-${statusTone(Number(status))}`}
      >
        <strong data-count={label}>{d.counts[label] ?? 0}</strong> {label}
      </Link>
    ))}
  </div>
);

/** The UI's home: a range's runs by DAG and by status, queues, workers, next fires; live. */
export const DashboardPage = () => {
  const { api } = useApp();
  const now = useNow(5000);
  const range = useDayRange();
  const { fromSec, toSec } = daysToUnix(range.from, range.to);
  const d = useLive(
    () => api.get<DashboardResponse>(DASHBOARD_PATH, dashboardQuery(range)),
    [fromSec, toSec],
    'run,queue,worker',
    // worker slots and heartbeats change with heartbeats, which send no event
    (x) => (x?.workers.list.length ? 5000 : 30_000),
  );
  return (
    <section className="page">
      <header className="page-head">
        <h1>Dashboard</h1>
        <span className={d.live ? 'live on' : 'live'} data-testid="live" role="status">
          {d.live ? 'live' : 'connecting…'}
        </span>
      </header>
      <RangePicker r={range} />
      {d.error && <ErrorBox error={d.error} what="reading the dashboard" />}
      {d.data && (
        <>
          <Counts d={d.data} from={range.from} to={range.to} />
          <h2 className="section-title">Runs by DAG</h2>
          <RunTimeline
            runs={d.data.runs}
            fromMs={(fromSec ?? 0) * 1000}
            toMs={((toSec ?? 0) + 1) * 1000}
            now={now}
          />
          {d.data.truncated && (
            <p className="small muted">
              Showing the newest {d.data.runs.length} of {d.data.total} runs: narrow the range or
              use <Link to={`/runs?from=${range.from}&to=${range.to}`}>Runs</Link>.
            </p>
          )}
          <div className="cards dash-cards">
            <QueuesCard queues={d.data.queues} />
            <WorkersCard workers={d.data.workers} now={now} />
            <NextFiresCard fires={d.data.nextFires} />
          </div>
        </>
      )}
    </section>
  );
};
