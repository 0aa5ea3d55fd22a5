import type { RunActivation, RunDispatcher } from '@trellis/services';
import type { DagRunRecord, RunRef } from '@trellis/spec';

/**
 * Workers behind the dispatcher port, standing in for the coordinator: the test decides when
 * they exist (`state.why` is the availability answer, null when one matches) and what they
 * report (`report`, the dispatcher's run-update event). Records every activation and cancel it is handed.
 */
export const fakeDispatcher = (why: string | null = null) => {
  const dispatched: RunActivation[] = [];
  const cancelled: { ref: RunRef; root: RunRef | undefined }[] = [];
  const listeners = new Set<() => void>();
  const updates = new Set<(record: DagRunRecord) => void>();
  const state = { why };
  const onDispatch = new Set<(a: RunActivation) => void>();
  const dispatcher: RunDispatcher = {
    availability: () => state.why,
    dispatch: (a) => {
      dispatched.push(a);
      for (const l of onDispatch) l(a);
      return Promise.resolve();
    },
    cancel: (ref, root) => {
      cancelled.push({ ref, root });
      return Promise.resolve();
    },
    onCapacity: (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    onRunUpdate: (l) => {
      updates.add(l);
      return () => updates.delete(l);
    },
  };
  return {
    dispatcher,
    dispatched,
    cancelled,
    state,
    /** A worker joined: availability turns null and capacity listeners hear of it. */
    join: () => {
      state.why = null;
      for (const l of [...listeners]) l();
    },
    /** A worker reported a run's record (through the coordinator): the run-update event. */
    report: (record: DagRunRecord) => {
      for (const l of [...updates]) l(record);
    },
    /** Resolves with the next activation handed to the dispatcher. */
    nextDispatch: () =>
      new Promise<RunActivation>((resolve) => {
        const l = (a: RunActivation): void => {
          onDispatch.delete(l);
          resolve(a);
        };
        onDispatch.add(l);
      }),
  };
};
