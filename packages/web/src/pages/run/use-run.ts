import type { ApiRunDetails, DagDetailsResponse } from '@trellis/contract';
import { type ApiError, seg } from '../../api/client';
import { useApp } from '../../app-context';
import { usePageActions } from '../../lib/use-page-actions';
import { NODE_STATUS_LABEL, isActiveRun } from '../../lib/status';
import { usePoll } from '../../lib/use-poll';
import { useRouter } from '../../router';

/**
 * The run (polled, every second while it is active) under its API path `base`, and for a
 * top-level run its DAG's definition, whose steps fill in the graph's edges.
 */
export const useRunData = (name: string, dagRunId: string, childId: string | undefined) => {
  const { api } = useApp();
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
  return { base, run, dag };
};

/**
 * The run's actions (stop, dequeue, retry, set a step's status): each says how it went in a toast,
 * and a failure is kept in `actionError` to show on the page. `reload` re-reads the run.
 */
export const useRunActions = (base: string, name: string, reload: () => void) => {
  const { api, toast } = useApp();
  const router = useRouter();
  const { actionError, setActionError, act } = usePageActions(reload);

  const stop = () => void act('Stop', () => api.post(`${base}/stop`), 'Stopping the run');
  const dequeue = () => void act('Dequeue', () => api.get(`${base}/dequeue`), 'Dequeued');
  /** Starts a retry and opens it (or re-reads this run when the answer names no new run). */
  const retry = async () => {
    try {
      const res = await api.post<{ dagRunId?: string }>(`${base}/retry`, {});
      toast('Retry started');
      if (res.dagRunId) router.navigate(`/runs/${seg(name)}/${seg(res.dagRunId)}`);
      else reload();
    } catch (e) {
      setActionError(e as ApiError);
    }
  };
  const setStepStatus = (step: string, status: number) =>
    void act(
      'Status change',
      () => api.patch(`${base}/steps/${seg(step)}/status`, { status }),
      `${step} marked ${NODE_STATUS_LABEL[status] ?? status}`,
    );

  return { actionError, stop, dequeue, retry, setStepStatus };
};
export type RunActions = ReturnType<typeof useRunActions>;
