import type { ListParams } from './use-list-params';

/** Search by name, filter by tag, and sort. */
export const DagListToolbar = ({
  params,
  tags,
}: {
  params: ListParams;
  tags: readonly string[];
}) => (
  <div className="toolbar" role="search">
    <input
      type="search"
      aria-label="Search DAGs by name"
      placeholder="Search by name…"
      value={params.name}
      onChange={(e) => params.setName(e.target.value)}
    />
    <select
      aria-label="Filter by tag"
      value={params.tag}
      onChange={(e) => params.setParam({ tag: e.target.value, page: '' })}
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
      value={params.sort}
      onChange={(e) => params.setParam({ sort: e.target.value === 'name' ? '' : e.target.value })}
    >
      <option value="name">Sort by name</option>
      <option value="nextRun">Sort by next run</option>
    </select>
  </div>
);
