import type { Response } from 'express';
import { AppError, ErrorCode } from '@trellis/core';
import type { RunPlan } from '@trellis/services';
import type { RouteResult } from '../http/define-routes.js';
import type { HttpDeps } from '../http/deps.js';

/** Header of an answer that repeats an earlier request's run. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/** A trigger's run and its answer; it creates the run under `dagRunId` when given one. */
type KeyedTrigger = (
  dagRunId?: string,
) => Promise<{ name: string; dagRunId: string; answer: RouteResult }>;

/**
 * Runs a start or enqueue once per Idempotency-Key (docs/api.md, "Idempotent triggers"): without
 * a key, `trigger` runs as usual; with one, the first request runs it and later ones with the
 * same request get its run (200, `Idempotent-Replayed: true`), another request with the key 409.
 * With a shared journal the run is created under the key's own id (unless the body names one),
 * so a request taking over the key from one that died after creating its run answers that run.
 */
export const idempotently = async (
  deps: HttpDeps,
  key: unknown,
  req: { request: string; payload: unknown; res: Response; fileName: string },
  trigger: KeyedTrigger,
): Promise<RouteResult> => {
  if (typeof key !== 'string') return (await trigger()).answer;
  if (!deps.idempotency)
    throw new AppError(
      ErrorCode.ServiceUnavailable,
      'this server keeps no idempotency keys: send the request without Idempotency-Key',
    );
  const out = await deps.idempotency.run(
    { key, request: req.request, payload: req.payload },
    (plan?: RunPlan) => (plan ? adopting(deps, req, plan, trigger) : trigger()),
  );
  if (out.replayed) req.res.setHeader(REPLAYED_HEADER, 'true');
  return out.result?.answer ?? { status: 200, body: { dagRunId: out.dagRunId } };
};

/**
 * The trigger under the planned id. When `plan.adopt`, the predecessor's run (found under that
 * id, before the trigger runs: a singleton start would refuse it as already running) is the
 * answer; a taken id the trigger finds is too.
 */
const adopting = async (
  deps: HttpDeps,
  req: { fileName: string; payload: unknown },
  plan: RunPlan,
  trigger: KeyedTrigger,
) => {
  const own = (req.payload as { dagRunId?: unknown } | undefined)?.dagRunId;
  const dagRunId = typeof own === 'string' && own !== '' ? own : plan.dagRunId;
  const adopted = async () => {
    const { dag } = await deps.dags.load(req.fileName);
    const answer: RouteResult = { status: 200, body: { dagRunId } };
    return { name: dag.name, dagRunId, adopted: true, answer };
  };
  if (plan.adopt && (await madeRun(deps, req.fileName, dagRunId))) return adopted();
  try {
    return await trigger(dagRunId);
  } catch (e) {
    if (!plan.adopt || !AppError.is(e) || e.code !== ErrorCode.AlreadyExists) throw e;
    return adopted();
  }
};

/** Whether the DAG has a stored run `dagRunId`. */
const madeRun = async (deps: HttpDeps, fileName: string, dagRunId: string): Promise<boolean> => {
  const { dag } = await deps.dags.load(fileName);
  try {
    await deps.reads.find({ name: dag.name, dagRunId });
    return true;
  } catch (e) {
    if (AppError.is(e) && e.code === ErrorCode.NotFound) return false;
    throw e;
  }
};

/** A start's or enqueue's body with the run id an idempotent trigger plans, unless it names one. */
export const withRunId = <B extends { dagRunId?: string | undefined }>(body: B, id?: string): B =>
  id === undefined || (body.dagRunId !== undefined && body.dagRunId !== '')
    ? body
    : { ...body, dagRunId: id };
