import type { DashboardResponse } from '@trellis/contract';
import { seg } from '../../api/client';
import { formatAge, formatTime } from '../../lib/time';
import { workerHealth } from '../../lib/worker-health';
import { Link } from '../../router';

/** Queues with occupancy (running of max) and the runs waiting in them. */
export const QueuesCard = ({ queues }: { queues: DashboardResponse['queues'] }) => (
  <article className="card" aria-label="Queues" data-testid="dash-queues">
    <header className="card-head">
      <h2>Queues</h2>
      <Link to="/queues" className="small">
        All queues
      </Link>
    </header>
    {queues.length === 0 && <p className="muted small">Nothing running or queued.</p>}
    <ul className="dash-list">
      {queues.map((q) => (
        <li key={q.name} data-queue={q.name}>
          <span className="mono">{q.name}</span>{' '}
          <span className="small" data-testid="occupancy">
            {q.running}
            {q.maxConcurrency !== undefined ? `/${q.maxConcurrency}` : ''} running, {q.queued}{' '}
            waiting
          </span>
          {q.waiting.length > 0 && (
            <ul className="small">
              {q.waiting.slice(0, 5).map((w) => (
                <li key={w.dagRunId}>
                  <Link to={`/runs/${seg(w.name)}/${seg(w.dagRunId)}`}>{w.name}</Link>{' '}
                  <span className="mono muted">{w.dagRunId}</span>
                </li>
              ))}
              {q.waiting.length > 5 && <li className="muted">and {q.waiting.length - 5} more</li>}
            </ul>
          )}
        </li>
      ))}
    </ul>
  </article>
);

/** Workers with state, slots busy/total and last heartbeat; embedded mode says so plainly. */
export const WorkersCard = ({
  workers,
  now,
}: {
  workers: DashboardResponse['workers'];
  now: number;
}) => (
  <article className="card" aria-label="Workers" data-testid="dash-workers">
    <header className="card-head">
      <h2>Workers</h2>
      <Link to="/workers" className="small">
        All workers
      </Link>
    </header>
    {workers.mode === 'embedded' ? (
      <p className="muted small" data-testid="embedded-mode">
        embedded mode: no workers (runs execute in the server process)
      </p>
    ) : workers.list.length === 0 ? (
      <p className="muted small">No worker has sent a heartbeat.</p>
    ) : (
      <ul className="dash-list">
        {workers.list.map((w) => {
          const h = workerHealth(w.health_status);
          return (
            <li key={w.id} data-worker={w.id}>
              <span className="mono">{w.id}</span>{' '}
              <span className={`badge status-${h.tone}`}>
                <span className="dot" aria-hidden="true" />
                {h.text}
              </span>{' '}
              <span className="small" data-testid="slots">
                {w.slotsBusy}/{w.slotsTotal ?? '?'} slots busy
              </span>{' '}
              <span className="small muted" title={w.last_heartbeat}>
                heartbeat {formatAge(w.last_heartbeat, now)}
              </span>
            </li>
          );
        })}
      </ul>
    )}
  </article>
);

/** The scheduler's next fires, earliest first. */
export const NextFiresCard = ({ fires }: { fires: DashboardResponse['nextFires'] }) => (
  <article className="card" aria-label="Next scheduled runs" data-testid="dash-next">
    <header className="card-head">
      <h2>Next scheduled runs</h2>
    </header>
    {fires.length === 0 && <p className="muted small">No DAG has a schedule.</p>}
    <ul className="dash-list">
      {fires.map((f) => (
        <li key={f.fileName}>
          <Link to={`/dags/${seg(f.fileName)}`}>{f.name}</Link>{' '}
          <time className="small muted" dateTime={f.nextRun} title={`${f.nextRun} (UTC)`}>
            {formatTime(f.nextRun)}
          </time>
        </li>
      ))}
    </ul>
  </article>
);
