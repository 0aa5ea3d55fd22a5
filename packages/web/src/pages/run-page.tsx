import { useState } from 'react';
import type { ApiLogChunk, ApiNode, ApiRunDetails, DagDetailsResponse } from '@trellis/contract';
import { type ApiError, seg } from '../api/client';
import { deniedTitle, useApp, useCan } from '../app-context';
import { DagGraph } from '../components/dag-graph';
import { ConfirmDialog } from '../components/dialog';
import { ErrorBox } from '../components/error-box';
import { Gantt } from '../components/gantt';
import { LogViewer } from '../components/log-viewer';
import { StatusBadge } from '../components/status-badge';
import { statusesOf } from '../lib/graph-input';
import { NODE_STATUS_LABEL, isActiveRun } from '../lib/status';
import { elapsed, formatDuration, formatTime } from '../lib/time';
import { useNow, usePoll } from '../lib/use-poll';
import { Link, useRouter } from '../router';

type LogChoice = { kind: 'run' } | { kind: 'step'; step: string; stream: 'stdout' | 'stderr' };

/**
 * One run (a top-level run, or a child run under `root`): nodes, graph, timeline, logs with
 * follow, and stop / retry / dequeue / step status.
 */
export const RunPage = ({
  name,
  dagRunId,
  childId,
}: {
  name: string;
  dagRunId: string;
  childId?: string;
}) => {
  const { api, session, toast } = useApp();
  const router = useRouter();
  const canRun = useCan('runs:write');
  const now = useNow(1000);
  const [logChoice, setLogChoice] = useState<LogChoice>({ kind: 'run' });
  const [confirm, setConfirm] = useState<'stop' | 'retry' | 'dequeue'>();
  const [actionError, setActionError] = useState<ApiError>();
  const base = `/dag-runs/${seg(name)}/${seg(dagRunId)}${childId ? `/children/${seg(childId)}` : ''}`;

  const run = usePoll(
    async () => (await api.get<{ dagRunDetails: ApiRunDetails }>(base)).dagRunDetails,
    [base],
    (r) => isActiveRun(r.status),
  );
  const dag = usePoll(
    async () =>
      childId
        ? undefined
        : await api.get<DagDetailsResponse>(`/dags/${seg(name)}`).catch(() => undefined),
    [name, childId],
  );

  const act = async (what: string, fn: () => Promise<unknown>, done: string) => {
    setActionError(undefined);
    try {
      await fn();
      toast(done);
      run.reload();
    } catch (e) {
      setActionError(e as ApiError);
      toast(`${what} failed: ${(e as ApiError).message}`, 'error');
    }
  };

  if (run.error && !run.data) return <ErrorBox error={run.error} what="reading the run" />;
  const r = run.data;
  if (!r) return <p className="muted">Loading…</p>;
  const live = isActiveRun(r.status);
  const handlers = [r.onSuccess, r.onFailure, r.onCancel, r.onExit].filter(
    (n): n is ApiNode => n !== null,
  );
  const allNodes = [...r.nodes, ...handlers];
  // The graph: the DAG's current steps when this is its own top-level run, else the run's own.
  const steps = r.nodes.map((n) => n.step);
  const readLog = (choice: LogChoice) => (offset: number, limit: number) =>
    api.get<ApiLogChunk>(
      choice.kind === 'run' ? `${base}/log` : `${base}/steps/${seg(choice.step)}/log`,
      choice.kind === 'run' ? { offset, limit } : { offset, limit, stream: choice.stream },
    );
  const logKey =
    logChoice.kind === 'run' ? `${base}#run` : `${base}#${logChoice.step}#${logChoice.stream}`;
  const logLabel = logChoice.kind === 'run' ? 'Run log' : `${logChoice.step} — ${logChoice.stream}`;
  const stepLive = (step: string) => {
    const n = allNodes.find((x) => x.step.name === step);
    return n ? n.status === 1 || (live && n.status === 0) : live;
  };
  const childLink = (childRunId: string) =>
    `/runs/${seg(r.rootDAGRunName || name)}/${seg(r.rootDAGRunId || dagRunId)}/children/${seg(childRunId)}`;

  const setStepStatus = (step: string, status: number) =>
    void act(
      'Status change',
      () => api.patch(`${base}/steps/${seg(step)}/status`, { status }),
      `${step} marked ${NODE_STATUS_LABEL[status] ?? status}`,
    );

  return (
    <section className="page">
      <nav className="crumbs" aria-label="Breadcrumb">
        <Link to="/dags">DAGs</Link> /{' '}
        <Link to={`/dags/${seg(childId ? r.name : name)}`}>{r.name}</Link>
        {childId && (
          <>
            {' '}
            / called by{' '}
            <Link
              to={
                r.parentDAGRunId && r.parentDAGRunId !== r.rootDAGRunId
                  ? childLink(r.parentDAGRunId)
                  : `/runs/${seg(r.rootDAGRunName)}/${seg(r.rootDAGRunId)}`
              }
            >
              {r.parentDAGRunName || r.rootDAGRunName}
            </Link>
          </>
        )}{' '}
        / <span className="mono">{r.dagRunId}</span>
      </nav>
      <header className="page-head">
        <h1>
          {r.name} <span className="muted mono small">{r.dagRunId}</span>
        </h1>
        <StatusBadge status={r.status} label={r.statusLabel} />
        <span className="spacer" />
        {!childId && (
          <div className="actions">
            {r.status === 1 && (
              <button
                type="button"
                className="danger"
                disabled={!canRun}
                title={canRun ? 'Stop this run' : deniedTitle(session, 'stop runs')}
                onClick={() => setConfirm('stop')}
              >
                Stop
              </button>
            )}
            {r.status === 5 && (
              <button
                type="button"
                disabled={!canRun}
                title={
                  canRun ? 'Take this run off its queue' : deniedTitle(session, 'dequeue runs')
                }
                onClick={() => setConfirm('dequeue')}
              >
                Dequeue
              </button>
            )}
            {!live && (
              <button
                type="button"
                className="primary"
                disabled={!canRun}
                title={canRun ? 'Retry as a new run' : deniedTitle(session, 'retry runs')}
                onClick={() => setConfirm('retry')}
              >
                Retry
              </button>
            )}
          </div>
        )}
      </header>
      <dl className="facts">
        <div>
          <dt>Started</dt>
          <dd>{formatTime(r.startedAt) || '—'}</dd>
        </div>
        <div>
          <dt>Finished</dt>
          <dd>{formatTime(r.finishedAt) || '—'}</dd>
        </div>
        <div>
          <dt>Duration</dt>
          <dd>{formatDuration(elapsed(r.startedAt, r.finishedAt, now)) || '—'}</dd>
        </div>
        {r.queuedAt && (
          <div>
            <dt>Queued</dt>
            <dd>{formatTime(r.queuedAt)}</dd>
          </div>
        )}
        <div>
          <dt>Parameters</dt>
          <dd className="mono">{r.params && r.params !== '{}' ? r.params : '—'}</dd>
        </div>
      </dl>
      {r.error && <div className="error-box">{r.error}</div>}
      {actionError && <ErrorBox error={actionError} />}
      <div className="two-col">
        <div className="panel">
          <h2>Graph</h2>
          <DagGraph
            steps={
              dag.data && dag.data.dag.name === r.name
                ? mergeSteps(steps, dag.data.dag.steps)
                : steps
            }
            statuses={statusesOf(allNodes)}
            {...(logChoice.kind === 'step' ? { selected: logChoice.step } : {})}
            onSelect={(step) => setLogChoice({ kind: 'step', step, stream: 'stdout' })}
          />
        </div>
        <div className="panel">
          <h2>Timeline</h2>
          <Gantt nodes={allNodes} runStart={r.startedAt} runEnd={r.finishedAt} now={now} />
        </div>
      </div>
      <div className="panel">
        <h2>Steps</h2>
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
              {allNodes.map((n) => (
                <tr key={n.step.name} data-step={n.step.name}>
                  <td>
                    <span className="strong">{n.step.name}</span>
                    {n.error && <div className="error-text small">{n.error}</div>}
                    {[...n.children, ...n.childrenRepeated].map((c) => (
                      <div key={c.dagRunId} className="small">
                        ↳{' '}
                        <Link to={childLink(c.dagRunId)}>
                          {c.name || n.step.run || 'child run'}
                        </Link>{' '}
                        {c.statusLabel && <StatusBadge status={c.status} label={c.statusLabel} />}
                      </div>
                    ))}
                  </td>
                  <td>
                    <StatusBadge status={n.status} label={n.statusLabel} node />
                  </td>
                  <td className="hide-narrow small">{formatTime(n.startedAt)}</td>
                  <td className="small">
                    {formatDuration(elapsed(n.startedAt, n.finishedAt, now))}
                  </td>
                  <td className="hide-narrow small">
                    {n.retryCount} / {n.doneCount}
                  </td>
                  <td className="nowrap">
                    <button
                      type="button"
                      className="small"
                      onClick={() =>
                        setLogChoice({ kind: 'step', step: n.step.name, stream: 'stdout' })
                      }
                    >
                      stdout
                    </button>
                    <button
                      type="button"
                      className="small"
                      onClick={() =>
                        setLogChoice({ kind: 'step', step: n.step.name, stream: 'stderr' })
                      }
                    >
                      stderr
                    </button>
                  </td>
                  <td className="hide-narrow">
                    <select
                      aria-label={`Set status of ${n.step.name}`}
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
                        if (e.target.value !== '')
                          setStepStatus(n.step.name, Number(e.target.value));
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
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </div>
      <div className="panel">
        <div className="tabs" role="tablist">
          <button
            type="button"
            role="tab"
            aria-selected={logChoice.kind === 'run'}
            className={logChoice.kind === 'run' ? 'active' : undefined}
            onClick={() => setLogChoice({ kind: 'run' })}
          >
            Run log
          </button>
          {logChoice.kind === 'step' && (
            <>
              <button type="button" role="tab" aria-selected className="active">
                {logChoice.step}
              </button>
              <select
                aria-label="Stream"
                value={logChoice.stream}
                onChange={(e) =>
                  setLogChoice({ ...logChoice, stream: e.target.value as 'stdout' | 'stderr' })
                }
              >
                <option value="stdout">stdout</option>
                <option value="stderr">stderr</option>
              </select>
            </>
          )}
        </div>
        <LogViewer
          key={logKey}
          sourceKey={logKey}
          read={readLog(logChoice)}
          live={logChoice.kind === 'run' ? live : stepLive(logChoice.step)}
          label={logLabel}
        />
      </div>
      {confirm === 'stop' && (
        <ConfirmDialog
          title="Stop this run?"
          message="Running steps get their stop signal; the run ends cancelled."
          confirm="Stop run"
          danger
          onClose={() => setConfirm(undefined)}
          onConfirm={() => void act('Stop', () => api.post(`${base}/stop`), 'Stopping the run')}
        />
      )}
      {confirm === 'dequeue' && (
        <ConfirmDialog
          title="Take this run off its queue?"
          message="It ends cancelled without running."
          confirm="Dequeue"
          onClose={() => setConfirm(undefined)}
          onConfirm={() => void act('Dequeue', () => api.get(`${base}/dequeue`), 'Dequeued')}
        />
      )}
      {confirm === 'retry' && (
        <ConfirmDialog
          title="Retry this run?"
          message="A new run starts; steps that succeeded keep their result."
          confirm="Retry"
          onClose={() => setConfirm(undefined)}
          onConfirm={() =>
            void (async () => {
              try {
                const res = await api.post<{ dagRunId?: string }>(`${base}/retry`, {});
                toast('Retry started');
                if (res.dagRunId) router.navigate(`/runs/${seg(name)}/${seg(res.dagRunId)}`);
                else run.reload();
              } catch (e) {
                setActionError(e as ApiError);
              }
            })()
          }
        />
      )}
    </section>
  );
};

/** The run's steps, with `depends` from the definition where the run's copy lacks them. */
const mergeSteps = (
  runSteps: ApiRunDetails['nodes'][number]['step'][],
  defSteps: DagDetailsResponse['dag']['steps'],
) => {
  const byName = new Map(defSteps.map((s) => [s.name, s]));
  return runSteps.map((s) =>
    s.depends.length > 0 ? s : { ...s, depends: byName.get(s.name)?.depends ?? [] },
  );
};
