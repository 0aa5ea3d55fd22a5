import type { ApiRunSummary, ListQueuesResponse } from '@trellis/contract';
import { seg } from '../api/client';
import { useApp } from '../app-context';
import { ErrorBox } from '../components/error-box';
import { StatusBadge } from '../components/status-badge';
import { AgeText } from '../components/time-text';
import { useNow, usePoll } from '../lib/use-poll';
import { Link } from '../router';

const RunList = ({ runs, empty, now }: { runs: ApiRunSummary[]; empty: string; now: number }) =>
  runs.length === 0 ? (
    <p className="muted small">{empty}</p>
  ) : (
    <ul className="run-list">
      {runs.map((r) => (
        <li key={`${r.name}/${r.dagRunId}`}>
          <Link to={`/runs/${seg(r.name)}/${seg(r.dagRunId)}`}>{r.name}</Link>{' '}
          <span className="mono small muted">{r.dagRunId}</span>{' '}
          <StatusBadge status={r.status} label={r.statusLabel} />{' '}
          <span className="small muted">
            <AgeText iso={r.startedAt || r.queuedAt} now={now} />
          </span>
        </li>
      ))}
    </ul>
  );

/** Queues with their limits, running and queued runs (`GET /queues`). */
export const QueuesPage = () => {
  const { api } = useApp();
  const now = useNow(5000);
  const q = usePoll(
    () => api.get<ListQueuesResponse>('/queues'),
    [],
    (d) => d.queues.some((x) => x.summary.total > 0),
  );
  return (
    <section className="page">
      <header className="page-head">
        <h1>Queues</h1>
      </header>
      {q.error && <ErrorBox error={q.error} what="reading the queues" />}
      {q.data?.queues.length === 0 && (
        <p className="muted">No queues: nothing is running or queued.</p>
      )}
      <div className="cards">
        {q.data?.queues.map((x) => (
          <article key={x.name} className="card" aria-label={`Queue ${x.name}`}>
            <header className="card-head">
              <h2>{x.name}</h2>
              <span className="tag">{x.type}</span>
            </header>
            <div className="meter" aria-label="Running of max concurrency">
              <span>
                <strong>{x.summary.running}</strong> running
                {x.maxConcurrency !== undefined ? ` of ${x.maxConcurrency}` : ''}
              </span>
              <span>
                <strong>{x.summary.queued}</strong> queued
              </span>
            </div>
            {x.maxConcurrency !== undefined && (
              <div className="bar">
                <span
                  style={{
                    width: `${Math.min(100, (x.summary.running / Math.max(1, x.maxConcurrency)) * 100)}%`,
                  }}
                />
              </div>
            )}
            <h3>Running</h3>
            <RunList runs={x.runningDAGRuns} empty="none" now={now} />
            <h3>Queued</h3>
            <RunList runs={x.queuedDAGRuns} empty="none" now={now} />
          </article>
        ))}
      </div>
    </section>
  );
};
