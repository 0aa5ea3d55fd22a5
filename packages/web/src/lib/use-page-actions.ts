import { useState } from 'react';
import type { ApiError } from '../api/client';
import { useApp } from '../app-context';

/**
 * A page's actions: `act` runs one, says how it went in a toast and calls `reload`; a failure is
 * kept in `actionError` to show on the page (`setActionError` for actions that report their own).
 */
export const usePageActions = (reload: () => void) => {
  const { toast } = useApp();
  const [actionError, setActionError] = useState<ApiError>();
  const act = async (what: string, fn: () => Promise<unknown>, done: string) => {
    setActionError(undefined);
    try {
      await fn();
      toast(done);
      reload();
    } catch (e) {
      setActionError(e as ApiError);
      toast(`${what} failed: ${(e as ApiError).message}`, 'error');
    }
  };
  return { actionError, setActionError, act };
};
