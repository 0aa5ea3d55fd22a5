import { RunStatus, runStatusLabel } from '@trellis/core';
import type { DagRunRecord } from '@trellis/spec';
import { checkDagPreconditions } from './dag-preconditions.js';
import type { EngineDeps } from './engine-deps.js';
import { runHandlers } from './handlers.js';
import { cancelRemaining, finalStatus } from './record-keeping.js';
import { newRunContext, type RunContext } from './run-context.js';
import { baseProcessEnv, prepareRunVars } from './run-env.js';
import type { RunDagInput } from './run-input.js';
import { schedule } from './scheduler.js';

export type { RunDagInput } from './run-input.js';

/**
 * Marks the record running and makes that durable before anything else happens: whoever sees
 * the run start finds it running on disk.
 */
const startRun = async (ctx: RunContext): Promise<void> => {
  const r = ctx.record;
  // A caller that created the record already "running" made that durable itself.
  const createdRunning = r.status === RunStatus.Running;
  r.status = RunStatus.Running;
  // A run that left a queue keeps the start its activation recorded (FIFO order shows in it).
  const startedHere = !createdRunning || r.startedAt === '';
  if (startedHere) r.startedAt = ctx.now();
  r.finishedAt = '';
  r.error = '';
  if (ctx.input.stop?.aborted) ctx.stop.stop(ctx.log);
  ctx.log(`run ${r.dagRunId} of DAG "${r.name}" started${ctx.input.dryRun ? ' (dry run)' : ''}`);
  // A record created running, with its start and nodes, is on disk as it is here: no save.
  if (!createdRunning) await ctx.saver.persistNow();
  else if (startedHere || ctx.nodesAdded) ctx.saver.persist();
  ctx.input.onStarted?.(r);
  ctx.deps.events?.safeEmit('run:started', r);
  ctx.stop.armTimeout(ctx.deps.clock, ctx.dag.timeoutSec, () => {
    ctx.progress.runError = `run timed out after ${ctx.dag.timeoutSec}s (timeoutSec)`;
    ctx.log(ctx.progress.runError);
  });
};

/** Sets up each run hook once, before the first step (never in a dry run). */
const setUpHooks = async (ctx: RunContext): Promise<void> => {
  if (ctx.input.dryRun) return;
  await ctx.hooks.setUp(ctx.deps.runHooks ?? [], () => ({
    dag: ctx.dag,
    record: ctx.record,
    workingDir: ctx.vars.workingDir,
    env: baseProcessEnv(ctx),
    log: ctx.log,
    abort: ctx.stop.signal,
  }));
};

/** Variables, hooks, `delaySec`, the DAG's preconditions, then the steps. */
const runSteps = async (ctx: RunContext): Promise<void> => {
  const { dag, stop } = ctx;
  await prepareRunVars(ctx);
  await setUpHooks(ctx);
  if (dag.delaySec > 0 && !stop.stopping) {
    ctx.log(`waiting ${dag.delaySec}s before the first step (delaySec)`);
    await ctx.deps.clock.sleep(dag.delaySec * 1000, stop.signal).catch(() => undefined);
  }
  if (!stop.stopping && !stop.timedOut && dag.preconditions.length > 0)
    await checkDagPreconditions(ctx);
  if (!stop.stopping && !stop.timedOut && !ctx.progress.preconditionFailed) await schedule(ctx);
};

/** Closes (flushes) the run log; a failure is the recorder's to report, never the run's end. */
const closeRunLog = async (ctx: RunContext): Promise<void> => {
  await ctx.deps.recorder.close().catch(() => undefined);
};

/** Handlers, hook clean-up, the final status saved; then the hooks hear of it. */
const endRun = async (ctx: RunContext, onStop: () => void): Promise<void> => {
  const r = ctx.record;
  ctx.stop.disarm();
  if (ctx.stop.timedOut) cancelRemaining(ctx, 'run timed out');
  await runHandlers(ctx);
  await ctx.hooks.tearDown();
  const status = finalStatus(ctx);
  const error = r.error || ctx.progress.runError;
  await Promise.all(ctx.closing);
  ctx.input.stop?.removeEventListener('abort', onStop);
  ctx.log(`run finished: ${runStatusLabel[status]}${error ? ` (${error})` : ''}`);
  // The logs are complete on disk before the final status is: a power cut never leaves a final
  // run with cut logs. Lines the hooks log after it reopen the run log; it is closed again. The
  // record takes its final status only then: a save still being written from the last step's
  // end would otherwise write it (and sync it) before the logs are closed, and once more after.
  await closeRunLog(ctx);
  r.status = status;
  r.error = error;
  r.finishedAt = ctx.now();
  await ctx.saver.persistNow();
  await ctx.hooks.runFinished(r);
  await closeRunLog(ctx);
  ctx.deps.events?.safeEmit('run:finished', r);
};

/**
 * Runs one DAG run to its end and returns the final record. Never throws for a failing step,
 * a timeout or a stop: those are statuses and `error` strings.
 * Event-driven: a step starts as soon as its dependencies end, with no polling loop.
 */
export const runDag = async (deps: EngineDeps, input: RunDagInput): Promise<DagRunRecord> => {
  const ctx = newRunContext(deps, input);
  const onStop = (): void => ctx.stop.stop(ctx.log);
  input.stop?.addEventListener('abort', onStop, { once: true });
  await startRun(ctx);
  try {
    await runSteps(ctx);
  } catch (e) {
    // A bug, not a step failure: record it so the run never stays "running".
    ctx.progress.runError = `internal error: ${(e as Error).message}`;
    ctx.log(ctx.progress.runError);
  }
  await endRun(ctx, onStop);
  return ctx.record;
};
