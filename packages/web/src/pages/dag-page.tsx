import { useState } from 'react';
import type { ApiRunDetails, DagDetailsResponse, DagRunsResponse } from '@trellis/contract';
import { type ApiError, seg } from '../api/client';
import { deniedTitle, useApp, useCan } from '../app-context';
import { DagGraph } from '../components/dag-graph';
import { ConfirmDialog, Dialog } from '../components/dialog';
import { ErrorBox } from '../components/error-box';
import { RunGrid } from '../components/run-grid';
import { SpecEditor } from '../components/spec-editor';
import { StartDialog } from '../components/start-dialog';
import { StatusBadge } from '../components/status-badge';
import { statusesOf } from '../lib/graph-input';
import { isActiveRun } from '../lib/status';
import { formatTime } from '../lib/time';
import { usePoll } from '../lib/use-poll';
import { Link, useRouter } from '../router';

type Tab = 'graph' | 'spec' | 'history';

/** One DAG: its graph (live during a run), definition editor, run history, and controls. */
export const DagPage = ({ fileName }: { fileName: string }) => {
  const { api, session, toast } = useApp();
  const router = useRouter();
  const canRun = useCan('runs:write');
  const canEdit = useCan('dags:write');
  const tab = (router.search.get('tab') as Tab | null) ?? 'graph';
  const [dialog, setDialog] = useState<'start' | 'enqueue' | 'rename' | 'delete' | 'stop-all'>();
  const [newName, setNewName] = useState(fileName);
  const [actionError, setActionError] = useState<ApiError>();

  const details = usePoll(
    () => api.get<DagDetailsResponse>(`/dags/${seg(fileName)}`),
    [fileName],
    (d) => isActiveRun(d.latestDAGRun.status),
  );
  const running = details.data ? isActiveRun(details.data.latestDAGRun.status) : false;
  const dagName = details.data?.dag.name ?? fileName;
  const latest = usePoll(
    async () =>
      details.data?.latestDAGRun.dagRunId
        ? (await api.get<{ dagRun: ApiRunDetails }>(`/dags/${seg(fileName)}/dag-runs/latest`))
            .dagRun
        : undefined,
    [fileName, details.data?.latestDAGRun.dagRunId],
    (r) => (r ? isActiveRun(r.status) : false),
  );
  const history = usePoll(
    () => api.get<DagRunsResponse>(`/dags/${seg(fileName)}/dag-runs`),
    [fileName, tab === 'history'],
    (h) => h.dagRuns.some((r) => isActiveRun(r.status)),
  );
  const spec = usePoll(
    () => api.get<{ spec: string; errors: string[] }>(`/dags/${seg(fileName)}/spec`),
    [fileName],
  );

  const act = async (what: string, fn: () => Promise<unknown>, done: string) => {
    setActionError(undefined);
    try {
      await fn();
      toast(done);
      details.reload();
      history.reload();
    } catch (e) {
      setActionError(e as ApiError);
      toast(`${what} failed: ${(e as ApiError).message}`, 'error');
    }
  };

  const setTab = (t: Tab) =>
    router.navigate(`/dags/${seg(fileName)}${t === 'graph' ? '' : `?tab=${t}`}`, { replace: true });

  if (details.error && !details.data)
    return <ErrorBox error={details.error} what="reading the DAG" />;
  const d = details.data;
  return (
    <section className="page">
      <nav className="crumbs" aria-label="Breadcrumb">
        <Link to="/dags">DAGs</Link> / <span>{fileName}</span>
      </nav>
      <header className="page-head">
        <h1>{dagName}</h1>
        {d && d.latestDAGRun.dagRunId && (
          <Link to={`/runs/${seg(dagName)}/${seg(d.latestDAGRun.dagRunId)}`}>
            <StatusBadge status={d.latestDAGRun.status} label={d.latestDAGRun.statusLabel} />
          </Link>
        )}
        {d?.suspended && <span className="badge status-cancelled">suspended</span>}
        <span className="spacer" />
        <div className="actions">
          <button
            type="button"
            className="primary"
            disabled={!canRun || !d}
            title={canRun ? undefined : deniedTitle(session, 'start runs')}
            onClick={() => setDialog('start')}
          >
            Start
          </button>
          <button
            type="button"
            disabled={!canRun || !d}
            title={canRun ? undefined : deniedTitle(session, 'enqueue runs')}
            onClick={() => setDialog('enqueue')}
          >
            Enqueue
          </button>
          <button
            type="button"
            disabled={!canRun || !running}
            title={
              canRun ? 'Stop every running run of this DAG' : deniedTitle(session, 'stop runs')
            }
            onClick={() => setDialog('stop-all')}
          >
            Stop all
          </button>
          <button
            type="button"
            disabled={!canRun || !d}
            title={canRun ? undefined : deniedTitle(session, 'suspend DAGs')}
            onClick={() =>
              void act(
                'Suspend',
                () => api.post(`/dags/${seg(fileName)}/suspend`, { suspend: !d?.suspended }),
                d?.suspended ? 'Resumed' : 'Suspended',
              )
            }
          >
            {d?.suspended ? 'Resume' : 'Suspend'}
          </button>
          <button
            type="button"
            disabled={!canEdit}
            title={canEdit ? undefined : deniedTitle(session, 'rename DAGs')}
            onClick={() => setDialog('rename')}
          >
            Rename
          </button>
          <button
            type="button"
            className="danger"
            disabled={!canEdit}
            title={canEdit ? undefined : deniedTitle(session, 'delete DAGs')}
            onClick={() => setDialog('delete')}
          >
            Delete
          </button>
        </div>
      </header>
      {d?.dag.description && <p className="lead">{d.dag.description}</p>}
      {d && (
        <dl className="facts">
          <div>
            <dt>Schedule</dt>
            <dd className="mono">{d.dag.schedule.map((s) => s.expression).join(', ') || '—'}</dd>
          </div>
          <div>
            <dt>Type</dt>
            <dd>{d.dag.type}</dd>
          </div>
          <div>
            <dt>Parameters</dt>
            <dd className="mono">{d.dag.defaultParams || '—'}</dd>
          </div>
          <div>
            <dt>Tags</dt>
            <dd>{d.dag.tags.join(', ') || '—'}</dd>
          </div>
          <div>
            <dt>Latest run</dt>
            <dd>{formatTime(d.latestDAGRun.startedAt) || 'never'}</dd>
          </div>
        </dl>
      )}
      {d?.errors.map((e) => (
        <div key={e} className="error-box">
          {e}
        </div>
      ))}
      {actionError && <ErrorBox error={actionError} />}
      <div className="tabs" role="tablist">
        {(['graph', 'spec', 'history'] as const).map((t) => (
          <button
            key={t}
            type="button"
            role="tab"
            aria-selected={tab === t}
            className={tab === t ? 'active' : undefined}
            onClick={() => setTab(t)}
          >
            {{ graph: 'Graph', spec: 'Definition', history: 'History' }[t]}
          </button>
        ))}
      </div>
      <div role="tabpanel">
        {tab === 'graph' && d && (
          <>
            <DagGraph
              steps={d.dag.steps}
              {...(latest.data ? { statuses: statusesOf(latest.data.nodes) } : {})}
              onSelect={() => {
                if (latest.data)
                  router.navigate(`/runs/${seg(dagName)}/${seg(latest.data.dagRunId)}`);
              }}
            />
            {latest.data && (
              <p className="muted small">
                Colours show run {latest.data.dagRunId} ({latest.data.statusLabel}).
              </p>
            )}
          </>
        )}
        {tab === 'spec' &&
          (spec.error ? (
            <ErrorBox error={spec.error} what="reading the definition" />
          ) : spec.data ? (
            <SpecEditor
              fileName={fileName}
              initial={spec.data.spec}
              onSaved={() => {
                spec.reload();
                details.reload();
              }}
            />
          ) : (
            <p className="muted">Loading…</p>
          ))}
        {tab === 'history' &&
          (history.error ? (
            <ErrorBox error={history.error} what="reading the history" />
          ) : history.data ? (
            <>
              <RunGrid runs={history.data.dagRuns} grid={history.data.gridData} />
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
                  {history.data.dagRuns.map((r) => (
                    <tr key={r.dagRunId}>
                      <td className="mono">
                        <Link to={`/runs/${seg(r.name)}/${seg(r.dagRunId)}`}>{r.dagRunId}</Link>
                      </td>
                      <td>
                        <StatusBadge status={r.status} label={r.statusLabel} />
                      </td>
                      <td className="hide-narrow">{formatTime(r.startedAt)}</td>
                      <td className="hide-narrow">{formatTime(r.finishedAt)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </>
          ) : (
            <p className="muted">Loading…</p>
          ))}
      </div>
      {(dialog === 'start' || dialog === 'enqueue') && (
        <StartDialog fileName={fileName} mode={dialog} onClose={() => setDialog(undefined)} />
      )}
      {dialog === 'stop-all' && (
        <ConfirmDialog
          title={`Stop every run of ${dagName}?`}
          message="Running steps get their stop signal; the runs end cancelled."
          confirm="Stop all"
          danger
          onClose={() => setDialog(undefined)}
          onConfirm={() =>
            void act('Stop all', () => api.post(`/dags/${seg(fileName)}/stop-all`), 'Stopping')
          }
        />
      )}
      {dialog === 'delete' && (
        <ConfirmDialog
          title={`Delete ${fileName}?`}
          message="The DAG file is removed. Its run history stays."
          confirm="Delete"
          danger
          onClose={() => setDialog(undefined)}
          onConfirm={() =>
            void (async () => {
              try {
                await api.delete(`/dags/${seg(fileName)}`);
                toast(`Deleted ${fileName}`);
                router.navigate('/dags');
              } catch (e) {
                setActionError(e as ApiError);
              }
            })()
          }
        />
      )}
      {dialog === 'rename' && (
        <Dialog
          title={`Rename ${fileName}`}
          onClose={() => setDialog(undefined)}
          footer={
            <>
              <button type="button" onClick={() => setDialog(undefined)}>
                Cancel
              </button>
              <button
                type="button"
                className="primary"
                disabled={!/^[a-zA-Z0-9_-]+$/.test(newName) || newName === fileName}
                onClick={() =>
                  void (async () => {
                    try {
                      await api.post(`/dags/${seg(fileName)}/rename`, { newFileName: newName });
                      setDialog(undefined);
                      toast(`Renamed to ${newName}`);
                      router.navigate(`/dags/${seg(newName)}`, { replace: true });
                    } catch (e) {
                      setActionError(e as ApiError);
                      setDialog(undefined);
                    }
                  })()
                }
              >
                Rename
              </button>
            </>
          }
        >
          <label className="form">
            New file name
            <input value={newName} onChange={(e) => setNewName(e.target.value)} autoFocus />
            <small>Letters, digits, “_” and “-”. Suspension moves with the DAG.</small>
          </label>
        </Dialog>
      )}
    </section>
  );
};
