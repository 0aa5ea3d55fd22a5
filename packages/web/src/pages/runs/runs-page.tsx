import type { ApiPagination, ApiRunSummary } from '@trellis/contract';
import { seg } from '../../api/client';
import { useApp } from '../../app-context';
import { ErrorBox } from '../../components/error-box';
import { StatusBadge } from '../../components/status-badge';
import { browserZone, daysToUnix } from '../../lib/date-range';
import { elapsed, formatDuration, formatTime } from '../../lib/time';
import { useLive } from '../../lib/use-live';
import { useNow, usePoll } from '../../lib/use-poll';
import { Link } from '../../router';
import { Pager } from '../dag-list/pager';
import { RunFilterForm } from './run-filter-form';
import { PAGE_SIZES, useRunFilters } from './use-run-filters';

interface RunsAnswer {
  dagRuns: ApiRunSummary[];
  pagination?: ApiPagination;
}

const RunRow = ({ r, now }: { r: ApiRunSummary; now: number }) => {
  const child = r.parentDAGRunId !== '';
  const to = child
    ? `/runs/${seg(r.rootDAGRunName)}/${seg(r.rootDAGRunId)}/children/${seg(r.dagRunId)}`
    : `/runs/${seg(r.name)}/${seg(r.dagRunId)}`;
  const start = r.startedAt || r.queuedAt;
  return (
    <tr data-run={r.dagRunId} data-dag={r.name}>
      <td>
        <Link to={`/dags/${seg(r.name)}`}>{r.name}</Link>
      </td>
      <td className="mono">
        <Link to={to}>{r.dagRunId}</Link>
      </td>
      <td>
        <StatusBadge status={r.status} label={r.statusLabel} />
      </td>
      <td>
        <time dateTime={start} title={start}>
          {formatTime(start)}
        </time>
      </td>
      <td>{r.startedAt ? formatDuration(elapsed(r.startedAt, r.finishedAt, now)) : ''}</td>
      <td className="mono small muted params">{r.params === '{}' ? '' : r.params}</td>
    </tr>
  );
};

/** Every run across DAGs, filtered, paged, newest first; the view lives in the URL. */
export const RunsPage = () => {
  const { api } = useApp();
  const now = useNow(5000);
  const { filters, page, perPage, setParams } = useRunFilters();
  const { fromSec, toSec } = daysToUnix(filters.from, filters.to);
  const query = {
    name: filters.dag,
    status: filters.status,
    tag: filters.tag,
    worker: filters.worker,
    fromDate: fromSec,
    toDate: toSec,
    page,
    perPage,
  };
  const runs = useLive(
    () => api.get<RunsAnswer>('/dag-runs', query),
    [JSON.stringify(query)],
    'run',
  );
  const tags = usePoll(() => api.get<{ tags: string[] }>('/dags/tags'), []);
  const p = runs.data?.pagination;
  return (
    <section className="page">
      <header className="page-head">
        <h1>Runs</h1>
        {p && (
          <span className="muted" data-testid="total">
            {p.totalRecords} runs
          </span>
        )}
      </header>
      <RunFilterForm
        filters={filters}
        tags={tags.data?.tags ?? []}
        apply={(f) => setParams({ ...f })}
      />
      {runs.error && <ErrorBox error={runs.error} what="reading the runs" />}
      <table className="table" aria-label="Runs">
        <thead>
          <tr>
            <th scope="col">DAG</th>
            <th scope="col">Run</th>
            <th scope="col">Status</th>
            <th scope="col">Started ({browserZone()})</th>
            <th scope="col">Duration</th>
            <th scope="col">Parameters</th>
          </tr>
        </thead>
        <tbody>
          {runs.data?.dagRuns.map((r) => (
            <RunRow key={`${r.name}/${r.dagRunId}`} r={r} now={now} />
          ))}
        </tbody>
      </table>
      {runs.data?.dagRuns.length === 0 && <p className="muted">No runs match these filters.</p>}
      <div className="toolbar">
        {p && p.totalPages > 1 && <Pager p={p} setParam={(c) => setParams(c)} />}
        <label className="small">
          Per page{' '}
          <select value={perPage} onChange={(e) => setParams({ perPage: e.target.value })}>
            {[...new Set([...PAGE_SIZES, perPage])].map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </label>
      </div>
    </section>
  );
};
