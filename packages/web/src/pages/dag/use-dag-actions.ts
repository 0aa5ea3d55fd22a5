import { type ApiError, seg } from '../../api/client';
import { useApp } from '../../app-context';
import { usePageActions } from '../../lib/use-page-actions';
import { useRouter } from '../../router';

/**
 * The DAG's actions (suspend, stop all, delete, rename): each says how it went in a toast, and a
 * failure is kept in `actionError` to show on the page. `reload` refreshes what they change.
 */
export const useDagActions = (fileName: string, reload: () => void) => {
  const { api, toast } = useApp();
  const router = useRouter();
  const { actionError, setActionError, act } = usePageActions(reload);

  /** Suspends a DAG that is not suspended, resumes one that is. */
  const toggleSuspend = (suspended: boolean | undefined) =>
    void act(
      'Suspend',
      () => api.post(`/dags/${seg(fileName)}/suspend`, { suspend: !suspended }),
      suspended ? 'Resumed' : 'Suspended',
    );

  const stopAll = () =>
    void act('Stop all', () => api.post(`/dags/${seg(fileName)}/stop-all`), 'Stopping');

  const remove = async () => {
    try {
      await api.delete(`/dags/${seg(fileName)}`);
      toast(`Deleted ${fileName}`);
      router.navigate('/dags');
    } catch (e) {
      setActionError(e as ApiError);
    }
  };

  /** Renames the file and opens the DAG under its new name; `close` closes the dialog either way. */
  const rename = async (newName: string, close: () => void) => {
    try {
      await api.post(`/dags/${seg(fileName)}/rename`, { newFileName: newName });
      close();
      toast(`Renamed to ${newName}`);
      router.navigate(`/dags/${seg(newName)}`, { replace: true });
    } catch (e) {
      setActionError(e as ApiError);
      close();
    }
  };

  return { actionError, toggleSuspend, stopAll, remove, rename };
};
export type DagActions = ReturnType<typeof useDagActions>;
