import type { ListWorkersResponse } from '@trellis/contract';
import { seg } from '../api/client';
import { useApp } from '../app-context';
import { ErrorBox } from '../components/error-box';
import { AgeText } from '../components/time-text';
import { workerHealth } from '../lib/worker-health';
import { useNow, usePoll } from '../lib/use-poll';
import { Link } from '../router';

/** Workers with health, labels, running tasks and heartbeat age (`GET /workers`). */
export const WorkersPage = () => {
  const { api } = useApp();
  const now = useNow(1000);
  const w = usePoll(
    () => api.get<ListWorkersResponse>('/workers'),
    [],
    () => true,
  );
  return (
    <section className="page">
      <header className="page-head">
        <h1>Workers</h1>
        {w.data && <span className="muted">{w.data.workers.length} connected</span>}
      </header>
      {w.error && <ErrorBox error={w.error} what="reading the workers" />}
      {w.error?.status === 503 && (
        <p className="muted">
          Workers appear here when the server runs in distributed mode (with Redis and the
          coordinator).
        </p>
      )}
      {w.data?.workers.length === 0 && <p className="muted">No worker has sent a heartbeat.</p>}
      <div className="cards">
        {w.data?.workers.map((x) => {
          const h = workerHealth(x.health_status);
          return (
            <article key={x.id} className="card" aria-label={`Worker ${x.id}`} data-health={h.text}>
              <header className="card-head">
                <h2 className="mono">{x.id}</h2>
                <span className={`badge status-${h.tone}`}>
                  <span className="dot" />
                  {h.text}
                </span>
              </header>
              <p className="small muted">
                Last heartbeat <AgeText iso={x.last_heartbeat} now={now} />
              </p>
              <div className="tags">
                {Object.entries(x.labels).map(([k, v]) => (
                  <span key={k} className="tag">
                    {k}={v}
                  </span>
                ))}
              </div>
              <h3>Running tasks ({x.running_tasks.length})</h3>
              {x.running_tasks.length === 0 ? (
                <p className="muted small">idle</p>
              ) : (
                <ul className="run-list">
                  {x.running_tasks.map((t) => (
                    <li key={t.dagRunId}>
                      <Link
                        to={
                          t.rootDagRunId && t.rootDagRunId !== t.dagRunId
                            ? `/runs/${seg(t.rootDagRunName)}/${seg(t.rootDagRunId)}/children/${seg(t.dagRunId)}`
                            : `/runs/${seg(t.dagName)}/${seg(t.dagRunId)}`
                        }
                      >
                        {t.dagName}
                      </Link>{' '}
                      <span className="mono small muted">{t.dagRunId}</span>{' '}
                      <span className="small muted">
                        <AgeText iso={t.startedAt} now={now} />
                      </span>
                    </li>
                  ))}
                </ul>
              )}
            </article>
          );
        })}
      </div>
    </section>
  );
};
