import type { Response } from 'express';
import { AppError, ErrorCode } from '@trellis/core';
import type { RouteResult } from '../http/define-routes.js';
import type { HttpDeps } from '../http/deps.js';

/** Header of an answer that repeats an earlier request's run. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/**
 * Runs a start or enqueue once per Idempotency-Key (docs/api.md, "Idempotent triggers"): without
 * a key, `trigger` runs as usual; with one, the first request runs it and later ones with the
 * same request get its run (200, `Idempotent-Replayed: true`), another request with the key 409.
 */
export const idempotently = async (
  deps: HttpDeps,
  key: unknown,
  req: { request: string; payload: unknown; res: Response },
  trigger: () => Promise<{ name: string; dagRunId: string; answer: RouteResult }>,
): Promise<RouteResult> => {
  if (typeof key !== 'string') return (await trigger()).answer;
  if (!deps.idempotency)
    throw new AppError(
      ErrorCode.ServiceUnavailable,
      'this server keeps no idempotency keys: send the request without Idempotency-Key',
    );
  const out = await deps.idempotency.run(
    { key, request: req.request, payload: req.payload },
    trigger,
  );
  if (out.result) return out.result.answer;
  req.res.setHeader(REPLAYED_HEADER, 'true');
  return { status: 200, body: { dagRunId: out.dagRunId } };
};
