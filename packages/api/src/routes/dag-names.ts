import type { HttpDeps } from '../http/deps.js';

/** Every DAG there can be in one listing page (the catalog is in memory). */
const ALL = 1_000_000;

/** Names of the DAGs carrying `tag` (case-insensitive, as GET /dags?tag=): the runs list's filter. */
export const dagNamesTagged = async (deps: HttpDeps, tag: string): Promise<string[]> => {
  const { entries } = await deps.dags.list({
    page: 1,
    perPage: ALL,
    tag,
    sort: 'name',
    order: 'asc',
  });
  return entries.map((e) => e.dag.name);
};

/** The next scheduled starts of every DAG, earliest first, at most `limit`. */
export const nextFires = async (
  deps: HttpDeps,
  limit: number,
): Promise<{ fileName: string; name: string; nextRun: string }[]> => {
  const { entries } = await deps.dags.list({
    page: 1,
    perPage: limit,
    sort: 'nextRun',
    order: 'asc',
  });
  return entries.flatMap((e) =>
    e.nextRun && !e.suspended
      ? [{ fileName: e.fileName, name: e.dag.name, nextRun: e.nextRun.toISOString() }]
      : [],
  );
};
