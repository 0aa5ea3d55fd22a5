import type { DagListQuery } from '@trellis/services';

/** What the DAG list filters and sorts by, lower-cased where matching ignores case. */
export interface ListRow {
  /** Lower-cased DAG name. */
  readonly name: string;
  /** Lower-cased file name. */
  readonly fileName: string;
  /** The file name as it is: unique, the last tie-break. */
  readonly key: string;
  readonly tags: ReadonlySet<string>;
  /** Next start in ms since the epoch; undefined = no schedule (or it never fires again). */
  readonly nextRunMs?: number | undefined;
}

/**
 * The `name` and `tag` filters of GET /dags: `name` is a case-insensitive substring of the file
 * name or the DAG name; `tag` a case-insensitive exact tag (as the peer does).
 */
export const matchesListFilter =
  (q: Pick<DagListQuery, 'name' | 'tag'>) =>
  (row: ListRow): boolean => {
    const name = q.name?.toLowerCase();
    const tag = q.tag?.toLowerCase();
    if (name && !row.fileName.includes(name) && !row.name.includes(name)) return false;
    if (tag !== undefined && tag !== '' && !row.tags.has(tag)) return false;
    return true;
  };

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The order of GET /dags (docs/decisions.md: `sort=name|nextRun`, `order=asc|desc`).
 * `name`: DAG name ignoring case, ties by file name. `nextRun`: earliest next start first; DAGs
 * without one last whatever the order (spec: Endpoints, DAG definitions), ties by name.
 * assumption: `order` also reverses the name tie-break; see docs/decisions.md.
 */
export const compareListRows =
  (q: Pick<DagListQuery, 'sort' | 'order'>) =>
  (a: ListRow, b: ListRow): number => {
    const dir = q.order === 'desc' ? -1 : 1;
    const byName = cmp(a.name, b.name) || cmp(a.key, b.key);
    if (q.sort === 'nextRun') {
      if (a.nextRunMs === undefined || b.nextRunMs === undefined) {
        if (a.nextRunMs !== b.nextRunMs) return a.nextRunMs === undefined ? 1 : -1;
      } else if (a.nextRunMs !== b.nextRunMs) return dir * (a.nextRunMs - b.nextRunMs);
    }
    return dir * byName;
  };
