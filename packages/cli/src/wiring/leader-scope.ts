import { AsyncLocalStorage } from 'node:async_hooks';
import type { RuntimeStore } from './runtime-store.js';

/** The compare-and-swap the queue processor hands a queued run on with (`saveRunIf`). */
type SwapStore = Pick<RuntimeStore, 'saveRunIf'>;

const scope = new AsyncLocalStorage<SwapStore>();

/**
 * Runs `fn` as the leader's queue processor: every `saveRunIf` of the runtime's store made in its
 * course (a queued run handed on, or failed past its activation limit) goes through `writes`,
 * the leader's store fenced by its lease token (`PgLeadership.writes`).
 */
export const asLeader = <T>(writes: SwapStore, fn: () => T): T => scope.run(writes, fn);

/**
 * The runtime's store whose `saveRunIf` goes through the leader's fenced store inside
 * {@link asLeader}, and straight to `store` elsewhere (API calls, runs executing here).
 */
export const withLeaderSwaps = (store: RuntimeStore): RuntimeStore => {
  const saveRunIf: RuntimeStore['saveRunIf'] = (record, expectRevision) =>
    (scope.getStore() ?? store).saveRunIf(record, expectRevision);
  return new Proxy(store, {
    get(target, prop) {
      if (prop === 'saveRunIf') return saveRunIf;
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
};
