import type { Response } from 'express';
import { AppError, ErrorCode } from '@trellis/core';
import { WAIT_TIMEOUT_DEFAULT_SECONDS } from '@trellis/contract';
import { waitForFinalRun, type RunEvents } from '@trellis/services';
import type { DagRunRecord, RunRef } from '@trellis/spec';
import type { HttpDeps } from '../http/deps.js';

/** The bus, or 503 naming what is missing. */
export const eventsOf = (deps: HttpDeps): RunEvents => {
  if (!deps.events)
    throw new AppError(
      ErrorCode.ServiceUnavailable,
      'this server has no event bus: waiting for runs and event streams are not available here',
    );
  return deps.events;
};

/**
 * The run details, at once, or with `waitFor=final` once the run is final or at the timeout
 * (docs/api.md, "Waiting for a run"). A client that goes away frees its waiter at once.
 */
export const findOrWait = async (
  deps: HttpDeps,
  ref: RunRef,
  query: { waitFor?: string | undefined; timeout?: number | undefined },
  res: Response,
): Promise<DagRunRecord> => {
  if (query.waitFor === undefined) return deps.reads.find(ref);
  const events = eventsOf(deps);
  const gone = new AbortController();
  const onClose = (): void => gone.abort();
  res.on('close', onClose);
  try {
    const seconds = query.timeout ?? WAIT_TIMEOUT_DEFAULT_SECONDS;
    return await waitForFinalRun(
      {
        reads: deps.reads,
        events,
        clock: deps.clock,
        ...(deps.finals ? { finals: deps.finals } : {}),
      },
      ref,
      seconds * 1000,
      gone.signal,
    );
  } finally {
    res.off('close', onClose);
  }
};
