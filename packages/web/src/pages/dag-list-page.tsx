import { useEffect, useState } from 'react';
import type { ListDagsResponse } from '@trellis/contract';
import { type ApiError, seg } from '../api/client';
import { deniedTitle, useApp, useCan } from '../app-context';
import { ErrorBox } from '../components/error-box';
import { StartDialog } from '../components/start-dialog';
import { StatusBadge } from '../components/status-badge';
import { isActiveRun } from '../lib/status';
import { formatTime } from '../lib/time';
import { usePoll } from '../lib/use-poll';
import { Link, useRouter } from '../router';

const PER_PAGE = 50;

/** The DAG list: search by name and tag, server-side pages, run and suspend controls. */
export const DagListPage = () => {
  const { api, session, toast } = useApp();
  const router = useRouter();
  const canRun = useCan('runs:write');
  const [name, setName] = useState(router.search.get('name') ?? '');
  const [query, setQuery] = useState(name);
  const tag = router.search.get('tag') ?? '';
  const page = Number(router.search.get('page') ?? '1') || 1;
  const sort = router.search.get('sort') === 'nextRun' ? 'nextRun' : 'name';
  const [dialog, setDialog] = useState<{ fileName: string; mode: 'start' | 'enqueue' }>();
  const [tags, setTags] = useState<string[]>([]);

  // Typing filters after a short pause, not on every key.
  useEffect(() => {
    const t = window.setTimeout(() => setQuery(name.trim()), 250);
    return () => window.clearTimeout(t);
  }, [name]);

  const setParam = (changes: Record<string, string>) => {
    const p = new URLSearchParams(router.search);
    for (const [k, v] of Object.entries(changes))
      if (v) p.set(k, v);
      else p.delete(k);
    const s = p.toString();
    router.navigate(`/dags${s ? `?${s}` : ''}`, { replace: true });
  };
  useEffect(() => {
    if (query !== (router.search.get('name') ?? '')) setParam({ name: query, page: '' });
    // only when the debounced text changes
  }, [query]);

  useEffect(() => {
    api
      .get<{ tags: string[] }>('/dags/tags')
      .then((r) => setTags(r.tags))
      .catch(() => undefined);
  }, [api]);

  const list = usePoll(
    () =>
      api.get<ListDagsResponse>('/dags', {
        page,
        perPage: PER_PAGE,
        name: query,
        tag,
        sort,
        order: 'asc',
      }),
    [query, tag, page, sort],
    (d) => d.dags.some((x) => isActiveRun(x.latestDAGRun.status)),
  );

  const suspend = async (fileName: string, value: boolean) => {
    try {
      await api.post(`/dags/${seg(fileName)}/suspend`, { suspend: value });
      toast(`${fileName} ${value ? 'suspended' : 'resumed'}`);
      list.reload();
    } catch (e) {
      toast((e as ApiError).message, 'error');
    }
  };

  const p = list.data?.pagination;
  return (
    <section className="page">
      <header className="page-head">
        <h1>DAGs</h1>
        {p && <span className="muted">{p.totalRecords} in total</span>}
      </header>
      <div className="toolbar" role="search">
        <input
          type="search"
          aria-label="Search DAGs by name"
          placeholder="Search by name…"
          value={name}
          onChange={(e) => setName(e.target.value)}
        />
        <select
          aria-label="Filter by tag"
          value={tag}
          onChange={(e) => setParam({ tag: e.target.value, page: '' })}
        >
          <option value="">All tags</option>
          {tags.map((t) => (
            <option key={t} value={t}>
              {t}
            </option>
          ))}
        </select>
        <select
          aria-label="Sort"
          value={sort}
          onChange={(e) => setParam({ sort: e.target.value === 'name' ? '' : e.target.value })}
        >
          <option value="name">Sort by name</option>
          <option value="nextRun">Sort by next run</option>
        </select>
      </div>
      {list.error && <ErrorBox error={list.error} what="listing DAGs" />}
      {list.data?.errors.map((e) => (
        <div key={e} className="warning">
          {e}
        </div>
      ))}
      <div className="table-wrap">
        <table className="table" aria-label="DAGs">
          <thead>
            <tr>
              <th>Name</th>
              <th className="hide-narrow">Schedule</th>
              <th>Latest run</th>
              <th className="hide-narrow">Next run</th>
              <th>Active</th>
              <th aria-label="Actions" />
            </tr>
          </thead>
          <tbody>
            {list.loading && !list.data && (
              <tr>
                <td colSpan={6} className="muted">
                  Loading…
                </td>
              </tr>
            )}
            {list.data?.dags.length === 0 && (
              <tr>
                <td colSpan={6} className="muted">
                  No DAGs{query || tag ? ' match' : ' yet: add YAML files to the DAGs folder'}.
                </td>
              </tr>
            )}
            {list.data?.dags.map((d) => (
              <tr key={d.fileName} data-dag={d.fileName}>
                <td>
                  <Link to={`/dags/${seg(d.fileName)}`} className="strong">
                    {d.dag.name || d.fileName}
                  </Link>
                  {d.dag.description && <div className="muted small">{d.dag.description}</div>}
                  <div className="tags">
                    {d.dag.tags.map((t) => (
                      <button
                        key={t}
                        type="button"
                        className="tag"
                        onClick={() => setParam({ tag: t, page: '' })}
                      >
                        {t}
                      </button>
                    ))}
                    {d.errors.length > 0 && (
                      <span className="tag tag-error" title={d.errors.join('\n')}>
                        {d.errors.length} problem{d.errors.length > 1 ? 's' : ''}
                      </span>
                    )}
                  </div>
                </td>
                <td className="hide-narrow mono small">
                  {d.dag.schedule.map((s) => s.expression).join(', ') || (
                    <span className="muted">—</span>
                  )}
                </td>
                <td>
                  {d.latestDAGRun.dagRunId ? (
                    <Link to={`/runs/${seg(d.dag.name)}/${seg(d.latestDAGRun.dagRunId)}`}>
                      <StatusBadge
                        status={d.latestDAGRun.status}
                        label={d.latestDAGRun.statusLabel}
                      />
                    </Link>
                  ) : (
                    <span className="muted">never run</span>
                  )}
                  <div className="muted small">{formatTime(d.latestDAGRun.startedAt)}</div>
                </td>
                <td className="hide-narrow small">
                  {d.suspended ? (
                    <span className="muted">suspended</span>
                  ) : d.nextRun ? (
                    formatTime(d.nextRun)
                  ) : d.dag.schedule.length > 0 ? (
                    <span className="muted">scheduled</span>
                  ) : (
                    <span className="muted">—</span>
                  )}
                </td>
                <td>
                  <label
                    className="switch"
                    title={canRun ? undefined : deniedTitle(session, 'suspend DAGs')}
                  >
                    <input
                      type="checkbox"
                      role="switch"
                      aria-label={`${d.fileName} active (not suspended)`}
                      checked={!d.suspended}
                      disabled={!canRun}
                      onChange={(e) => void suspend(d.fileName, !e.target.checked)}
                    />
                    <span className="slider" />
                  </label>
                </td>
                <td className="actions">
                  <button
                    type="button"
                    className="primary small"
                    disabled={!canRun}
                    title={canRun ? `Start ${d.fileName}` : deniedTitle(session, 'start runs')}
                    onClick={() => setDialog({ fileName: d.fileName, mode: 'start' })}
                  >
                    Start
                  </button>
                  <button
                    type="button"
                    className="small"
                    disabled={!canRun}
                    title={canRun ? `Enqueue ${d.fileName}` : deniedTitle(session, 'enqueue runs')}
                    onClick={() => setDialog({ fileName: d.fileName, mode: 'enqueue' })}
                  >
                    Enqueue
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {p && p.totalPages > 1 && (
        <nav className="pager" aria-label="Pages">
          <button
            type="button"
            disabled={p.prevPage === null}
            onClick={() => setParam({ page: String(p.prevPage ?? 1) })}
          >
            ‹ Previous
          </button>
          <span>
            Page {p.currentPage} of {p.totalPages}
          </span>
          <button
            type="button"
            disabled={p.nextPage === null}
            onClick={() => setParam({ page: String(p.nextPage ?? p.totalPages) })}
          >
            Next ›
          </button>
        </nav>
      )}
      {dialog && (
        <StartDialog
          fileName={dialog.fileName}
          mode={dialog.mode}
          onClose={() => setDialog(undefined)}
        />
      )}
    </section>
  );
};
