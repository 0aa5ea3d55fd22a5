import { statSync } from 'node:fs';
import type { NodeRecord, Step } from '@trellis/spec';
import type { ExecContext, ExecutionOutcome, Executor } from '../../ports/executor.js';
import type { StepLogs } from '../../ports/recorder.js';
import { FAILED, resultOfOutcome, stoppedResult, type AttemptResult } from './attempt-result.js';
import { runChild, type ChildReport } from './child-run.js';
import { dryExecutor } from './dry-executor.js';
import { expandStep } from './expand-step.js';
import { withItem, type NodeScope } from './node-scope.js';
import type { RunContext } from '../run-context.js';

/** The executor of a step: the dry one, a run hook's, or the registry's. */
const executorOf = (ctx: RunContext, step: Step): Executor | undefined =>
  ctx.input.dryRun
    ? dryExecutor
    : (ctx.hooks.executorFor(step) ?? ctx.deps.executors[step.executor.type]);

/** Whether `path` is a directory: one system call per execution (not existsSync, then statSync). */
const isDirectory = (path: string): boolean => {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false; // missing, or not reachable (ENOTDIR, EACCES), as existsSync says
  }
};

/** What the executor gets for one execution of the expanded `step`. */
const execContext = (
  ctx: RunContext,
  step: Step,
  scope: NodeScope,
  logs: StepLogs,
): ExecContext => {
  const wantsCapture =
    step.output !== undefined ||
    step.continueOn.output.length > 0 ||
    step.repeatPolicy?.condition !== undefined;
  const r = ctx.record;
  return {
    step,
    dag: ctx.dag,
    cwd: scope.cwd,
    env: scope.env,
    defaultShell: ctx.deps.defaultShell,
    stdout: logs.stdout,
    stderr: logs.stderr,
    stop: {
      abort: ctx.stop.signal,
      signal: step.signalOnStop as NodeJS.Signals,
      graceMs: ctx.dag.maxCleanUpTimeSec * 1000,
    },
    ...(wantsCapture ? { captureLimit: ctx.dag.maxOutputSize } : {}),
    run: {
      name: r.name,
      dagRunId: r.dagRunId,
      root: { name: r.root.name, dagRunId: r.root.dagRunId },
    },
  };
};

/**
 * One execution of a node's step (for one parallel `item`, when given): a child DAG run, or the
 * step's executor in its working directory. `child` receives a child run's summary.
 */
export const executeOne = async (
  ctx: RunContext,
  n: NodeRecord,
  baseScope: NodeScope,
  logs: StepLogs,
  item: string | undefined,
  child?: ChildReport,
): Promise<AttemptResult> => {
  const scope = item === undefined ? baseScope : withItem(baseScope, item);
  if (n.step.executor.type === 'dag') return runChild(ctx, n, scope, logs, item, child);

  if (!isDirectory(scope.cwd))
    return { ...FAILED, error: `working directory ${scope.cwd} does not exist` };
  const executor = executorOf(ctx, n.step);
  if (!executor)
    return {
      ...FAILED,
      error: `the ${n.step.executor.type} executor is not available in this process`,
    };

  let expanded: Awaited<ReturnType<typeof expandStep>>;
  try {
    expanded = await expandStep(ctx, n.step, scope);
  } catch (e) {
    return {
      ...FAILED,
      error: `the step's variables could not be expanded: ${(e as Error).message}`,
    };
  }
  const { step } = expanded;
  const env = { ...scope.env, ...expanded.env };
  let outcome: ExecutionOutcome;
  try {
    outcome = await executor.run(execContext(ctx, step, { ...scope, env }, logs), (pid) => {
      n.pid = pid;
      ctx.saver.persist();
    });
  } catch (e) {
    return {
      ...FAILED,
      error: `the ${step.executor.type} executor failed: ${(e as Error).message}`,
    };
  }
  delete n.pid;
  if (ctx.stop.aborted) return stoppedResult(outcome);
  return resultOfOutcome(outcome, step.output !== undefined, ctx.dag.maxOutputSize);
};
