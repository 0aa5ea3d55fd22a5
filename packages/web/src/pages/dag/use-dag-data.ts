import type { ApiRunDetails, DagDetailsResponse, DagRunsResponse } from '@trellis/contract';
import { seg } from '../../api/client';
import { useApp } from '../../app-context';
import { isActiveRun } from '../../lib/status';
import { usePoll } from '../../lib/use-poll';

export type Tab = 'graph' | 'spec' | 'history';

/**
 * What the DAG page shows, each polled (faster while a run is active): the DAG's details, its
 * latest run (to colour the graph), its run history, and its definition.
 */
export const useDagData = (fileName: string, tab: Tab) => {
  const { api } = useApp();
  const details = usePoll(
    () => api.get<DagDetailsResponse>(`/dags/${seg(fileName)}`),
    [fileName],
    (d) => isActiveRun(d.latestDAGRun.status),
  );
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
  return { details, latest, history, spec };
};
