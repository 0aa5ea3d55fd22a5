import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { NodeStatus, RunStatus, nodeStatusLabel, runStatusLabel } from '@trellis/core';
import {
  HANDLER_KINDS,
  handlerNodeName,
  type ChildRunRef,
  type Dag,
  type DagRunRecord,
  type HandlerKind,
  type NodeRecord,
  type Step,
} from '@trellis/spec';
import { evaluateConditions, type ConditionEnv } from '../conditions/evaluate-conditions.js';
import {
  repeatAllowed,
  repeatDelayMs,
  repeatHoldsByExit,
  repeatsWhen,
} from '../policies/repeat-policy.js';
import { stepVerdict } from '../policies/step-verdict.js';
import { resolveRetryPolicy, retryDelayMs, shouldRetry } from '../policies/retry-policy.js';
import type { StepLogs } from '../ports/recorder.js';
import type { ExecutionOutcome } from '../ports/executor.js';
import { matchExpected } from '../vars/condition.js';
import { filterSystemEnv, parseDotenv } from '../vars/env.js';
import { expandVars, expandVarsSync } from '../vars/expand.js';
import { splitParallelItems } from '../vars/items.js';
import { childOutputJson } from '../vars/output.js';
import { FAILED, resultOfOutcome, stoppedResult, type AttemptResult } from './attempt-result.js';
import { dryExecutor } from './dry-executor.js';
import type { EngineDeps } from './engine-deps.js';
import { ancestorsByStep, isDone, newNodeRecord } from './node-state.js';
import { readinessOf } from './readiness.js';
import { HookSet } from './hook-set.js';
import { RecordSaver } from './record-saver.js';
import { evaluateRunStatus } from './run-status.js';
import { StopControl } from './stop-control.js';

/** One run of a DAG, as the caller created its record. */
export interface RunDagInput {
  readonly dag: Dag;
  /** The other DAGs of the DAG's file (`run:` targets looked up first). */
  readonly localDags?: readonly Dag[];
  /**
   * The record as created by the caller: ids, root/parent, final (unexpanded) params and log
   * path. Nodes already in a final status (a retried run's succeeded steps) are kept as they are.
   */
  readonly record: DagRunRecord;
  /** Aborting it stops the run: running steps get their stop signal; the run ends cancelled. */
  readonly stop?: AbortSignal;
  /** Everything but executing commands: each step succeeds and logs what it would run. */
  readonly dryRun?: boolean;
  /** Called once the run is durably "running" (its first save completed), before any step. */
  readonly onStarted?: (record: DagRunRecord) => void;
}

type Scope = Readonly<Record<string, string>>;

/** Variables and environment of one node execution. */
interface NodeScope {
  readonly cwd: string;
  /** For command and script text: step vars, step env, params, ancestor outputs. */
  readonly commandScopes: readonly Scope[];
  /** Everything, including DAG env and the whole system environment (parse time). */
  readonly fullScopes: readonly Scope[];
  /** The environment the step's process receives. */
  readonly env: Readonly<Record<string, string>>;
}

const childRunId = (key: string): string =>
  createHash('sha256').update(key).digest('hex').slice(0, 32);

/**
 * Runs one DAG run to its end and returns the final record. Never throws for a failing step,
 * a timeout or a stop: those are statuses and `error` strings (ARCHITECTURE.md section 2).
 * Event-driven: a step starts as soon as its dependencies end, with no polling loop.
 */
export const runDag = (deps: EngineDeps, input: RunDagInput): Promise<DagRunRecord> =>
  new DagRunner(deps, input).run();

class DagRunner {
  private readonly r: DagRunRecord;
  private readonly dag: Dag;
  private readonly byName = new Map<string, NodeRecord>();
  private readonly ancestors: Map<string, string[]>;
  private readonly continues = new Map<string, boolean>();
  private readonly failedButContinued = new Set<string>();
  private readonly started = new Set<string>();
  private readonly stopper = new StopControl();
  private running = 0;
  private preconditionFailed = false;
  private handlerFailed = false;
  private runError = '';
  private dagEnv: Record<string, string> = {};
  private params: Record<string, string> = {};
  private namedParams: Record<string, string> = {};
  private context: Record<string, string> = {};
  private workingDir = '';
  private readonly closing: Promise<void>[] = [];
  private readonly saver: RecordSaver;
  private readonly hooks = new HookSet((line) => this.log(line));
  /** The record came without node records (they were made here, and are not on disk yet). */
  private nodesAdded = false;

  constructor(
    private readonly deps: EngineDeps,
    private readonly input: RunDagInput,
  ) {
    this.r = input.record;
    this.dag = input.dag;
    if (this.r.nodes.length === 0) {
      this.r.nodes = this.dag.steps.map(newNodeRecord);
      this.nodesAdded = true;
    }
    for (const n of this.r.nodes) this.byName.set(n.step.name, n);
    this.ancestors = ancestorsByStep(this.dag.steps);
    this.saver = new RecordSaver(this.r, deps.recorder, (line) => this.log(line));
  }

  private persist(): void {
    this.saver.persist();
  }

  private persistNow(): Promise<void> {
    return this.saver.persistNow();
  }

  private now(): string {
    return this.deps.clock.now().toISOString();
  }

  private log(line: string): void {
    this.deps.recorder.log(line);
  }

  async run(): Promise<DagRunRecord> {
    const r = this.r;
    // A caller that created the record already "running" made that durable itself.
    const createdRunning = r.status === RunStatus.Running;
    r.status = RunStatus.Running;
    // A run that left a queue keeps the start its activation recorded (FIFO order shows in it).
    const startedHere = !createdRunning || r.startedAt === '';
    if (startedHere) r.startedAt = this.now();
    r.finishedAt = '';
    r.error = '';
    const onStop = (): void => this.stop();
    this.input.stop?.addEventListener('abort', onStop, { once: true });
    if (this.input.stop?.aborted) this.stop();
    this.log(
      `run ${r.dagRunId} of DAG "${r.name}" started${this.input.dryRun ? ' (dry run)' : ''}`,
    );
    // Durable before anything else happens: whoever sees the run start finds it running on disk.
    // A record created running, with its start and nodes, is on disk as it is here: no save.
    if (!createdRunning) await this.persistNow();
    else if (startedHere || this.nodesAdded) this.persist();
    this.input.onStarted?.(r);
    this.deps.events?.safeEmit('run:started', r);
    this.armTimeout();
    try {
      await this.prepare();
      await this.setUpHooks();
      if (this.dag.delaySec > 0 && !this.stopper.stopping) {
        this.log(`waiting ${this.dag.delaySec}s before the first step (delaySec)`);
        await this.deps.clock
          .sleep(this.dag.delaySec * 1000, this.stopper.signal)
          .catch(() => undefined);
      }
      if (!this.stopper.stopping && !this.stopper.timedOut && this.dag.preconditions.length > 0)
        await this.checkDagPreconditions();
      if (!this.stopper.stopping && !this.stopper.timedOut && !this.preconditionFailed)
        await this.schedule();
    } catch (e) {
      // A bug, not a step failure: record it so the run never stays "running".
      this.runError = `internal error: ${(e as Error).message}`;
      this.log(this.runError);
    }
    this.stopper.disarm();
    if (this.stopper.timedOut) this.cancelRemaining('run timed out');
    await this.runHandlers();
    await this.hooks.tearDown();
    r.status = this.finalStatus();
    r.error = r.error || this.runError;
    await Promise.all(this.closing);
    r.finishedAt = this.now();
    this.input.stop?.removeEventListener('abort', onStop);
    this.log(`run finished: ${runStatusLabel[r.status]}${r.error ? ` (${r.error})` : ''}`);
    await this.persistNow();
    await this.hooks.runFinished(r);
    await this.deps.recorder.close();
    this.deps.events?.safeEmit('run:finished', r);
    return r;
  }

  // ---- stop, timeout --------------------------------------------------------------------------

  private stop(): void {
    this.stopper.stop((line) => this.log(line));
  }

  private armTimeout(): void {
    this.stopper.armTimeout(this.deps.clock, this.dag.timeoutSec, () => {
      this.runError = `run timed out after ${this.dag.timeoutSec}s (timeoutSec)`;
      this.log(this.runError);
    });
  }

  private cancelRemaining(error: string): void {
    for (const n of this.r.nodes)
      if (n.status === NodeStatus.NotStarted) this.finish(n, NodeStatus.Cancelled, error);
  }

  // ---- persistence ----------------------------------------------------------------------------

  private setStatus(n: NodeRecord, status: NodeStatus): void {
    n.status = status;
    this.persist();
    this.deps.events?.safeEmit('node:statusChanged', this.r, n.step.name, status);
  }

  private finish(n: NodeRecord, status: NodeStatus, error: string): void {
    n.error = error;
    n.finishedAt = this.now();
    delete n.pid;
    const what = status === NodeStatus.Skipped ? 'skipped' : `finished: ${nodeStatusLabel[status]}`;
    this.log(`step "${n.step.name}" ${what}${error ? ` (${error})` : ''}`);
    this.setStatus(n, status);
    this.hooks.nodeFinished(n);
  }

  // ---- environment ----------------------------------------------------------------------------

  private backticks = async (command: string): Promise<string> => {
    const r = await this.deps.commands.run(command, {
      cwd: this.workingDir,
      env: this.baseProcessEnv(),
      shell: this.deps.defaultShell,
      abort: this.stopper.signal,
    });
    return r.stdout.trim();
  };

  /** DAG env (+dotenv), params and context variables, evaluated once at run start. */
  private async prepare(): Promise<void> {
    const sys = this.deps.systemEnv;
    const fileDir = this.dag.location ? dirname(this.dag.location) : process.cwd();
    const wd = expandVarsSync(this.dag.workingDir, [sys]);
    this.workingDir = isAbsolute(wd) ? wd : resolve(fileDir, wd);

    const dotenv: Record<string, string> = {};
    for (const file of this.dag.dotenv) {
      const path = resolve(this.workingDir, expandVarsSync(file, [sys]));
      if (!existsSync(path)) {
        if (file !== '.env') this.log(`dotenv file ${path} not found; skipped`);
        continue;
      }
      const { entries, problems } = parseDotenv(readFileSync(path, 'utf8'));
      for (const p of problems) this.log(`dotenv ${path}: ${p}`);
      // spec: later files override earlier ones; system variables take precedence
      for (const e of entries) if (sys[e.name] === undefined) dotenv[e.name] = e.value;
    }
    const env: Record<string, string> = { ...dotenv };
    for (const e of this.dag.env)
      env[e.key] = await expandVars(e.value, [env, sys], { backticks: this.backticks });
    this.dagEnv = env;

    const params: Record<string, string> = {};
    for (const p of this.r.params) {
      p.value = await expandVars(p.value, [params, env, sys], { backticks: this.backticks });
      params[p.name] = p.value;
    }
    this.params = params;
    this.namedParams = Object.fromEntries(
      this.r.params.filter((p) => !/^\d+$/.test(p.name)).map((p) => [p.name, p.value]),
    );
    this.context = {
      DAG_NAME: this.r.name,
      DAG_RUN_ID: this.r.dagRunId,
      DAG_RUN_LOG_FILE: this.r.log,
    };
  }

  /** The environment every step process starts from (spec, Variables: filtered system env). */
  private baseProcessEnv(): Record<string, string> {
    return {
      ...filterSystemEnv(this.deps.systemEnv),
      ...this.dagEnv,
      ...this.context,
      ...this.namedParams,
    };
  }

  private outputsFor(n: NodeRecord, isHandler: boolean): Record<string, string> {
    const out: Record<string, string> = {};
    const names = isHandler
      ? this.r.nodes.map((x) => x.step.name)
      : (this.ancestors.get(n.step.name) ?? []);
    for (const name of names) {
      const o = this.byName.get(name)?.outputs ?? {};
      for (const [k, v] of Object.entries(o)) if (!(k in out)) out[k] = v;
    }
    return out;
  }

  private async nodeScope(n: NodeRecord, logs: StepLogs, extra: Scope): Promise<NodeScope> {
    const dir = n.step.dir
      ? expandVarsSync(n.step.dir, [this.params, this.dagEnv, this.deps.systemEnv])
      : '';
    const cwd = dir ? (isAbsolute(dir) ? dir : resolve(this.workingDir, dir)) : this.workingDir;
    const isHandler = HANDLER_KINDS.some(
      (k) => handlerNodeName[k] === n.step.name && this.dag.handlerOn[k] === n.step,
    );
    const outputs = this.outputsFor(n, isHandler);
    const stepVars: Record<string, string> = {
      DAG_RUN_STEP_NAME: n.step.name,
      DAG_RUN_STEP_STDOUT_FILE: logs.stdoutPath,
      DAG_RUN_STEP_STDERR_FILE: logs.stderrPath,
      PWD: cwd,
      ...extra,
    };
    const stepEnv: Record<string, string> = {};
    for (const e of n.step.env) {
      stepEnv[e.key] = await expandVars(
        e.value,
        [stepEnv, stepVars, this.params, outputs, this.context, this.dagEnv, this.deps.systemEnv],
        { backticks: this.backticks },
      );
    }
    return {
      cwd,
      commandScopes: [stepVars, stepEnv, this.params, outputs],
      fullScopes: [
        stepVars,
        stepEnv,
        this.params,
        outputs,
        this.context,
        this.dagEnv,
        this.deps.systemEnv,
      ],
      env: { ...this.baseProcessEnv(), ...outputs, ...stepEnv, ...stepVars },
    };
  }

  private conditionEnv(scope: NodeScope, shell: string | undefined): ConditionEnv {
    return {
      expandFull: (text) => expandVars(text, scope.fullScopes, { backticks: this.backticks }),
      expandVarsOnly: (text) => expandVarsSync(text, scope.commandScopes),
      runCommand: (command) =>
        this.deps.commands.run(command, {
          cwd: scope.cwd,
          env: scope.env,
          shell: shell ?? this.deps.defaultShell,
          abort: this.stopper.signal,
        }),
    };
  }

  // ---- DAG preconditions ----------------------------------------------------------------------

  private async checkDagPreconditions(): Promise<void> {
    if (this.input.dryRun) return;
    const scopes = [this.params, this.context, this.dagEnv, this.deps.systemEnv];
    const env = this.baseProcessEnv();
    const { met, results } = await evaluateConditions(this.dag.preconditions, {
      expandFull: (t) => expandVars(t, scopes, { backticks: this.backticks }),
      expandVarsOnly: (t) => expandVarsSync(t, [this.params]),
      runCommand: (c) =>
        this.deps.commands.run(c, {
          cwd: this.workingDir,
          env,
          shell: this.deps.defaultShell,
          abort: this.stopper.signal,
        }),
    });
    this.r.preconditions = results;
    if (!met) {
      this.preconditionFailed = true;
      this.r.error = "the DAG's preconditions were not met; no step ran";
      this.log(this.r.error);
    }
    this.persist();
  }

  // ---- scheduling -----------------------------------------------------------------------------

  /** Starts every ready node as capacity allows; resolves when nothing runs and nothing can start. */
  private schedule(): Promise<void> {
    const max = this.dag.maxActiveSteps;
    return new Promise<void>((done) => {
      const tick = (): void => {
        let changed = true;
        while (changed) {
          changed = false;
          for (const n of this.r.nodes) {
            if (n.status !== NodeStatus.NotStarted || this.started.has(n.step.name)) continue;
            if (this.stopper.stopping || this.stopper.timedOut) break;
            const readiness = readinessOf(
              n.step.depends.map((d) => {
                const up = this.byName.get(d);
                return {
                  status: up?.status ?? NodeStatus.Succeeded,
                  continues: this.continues.get(d) ?? false,
                };
              }),
            );
            if (readiness.kind === 'wait') continue;
            if (readiness.kind !== 'ready') {
              this.started.add(n.step.name);
              this.finish(
                n,
                readiness.kind === 'cancel' ? NodeStatus.Cancelled : NodeStatus.Skipped,
                readiness.error,
              );
              changed = true;
              continue;
            }
            if (max !== -1 && this.running >= max) continue;
            this.running++;
            this.started.add(n.step.name);
            this.runNode(n, false)
              .catch((e: unknown) =>
                this.finish(n, NodeStatus.Failed, `internal error: ${(e as Error).message}`),
              )
              .finally(() => {
                this.running--;
                tick();
              });
          }
        }
        if (this.running === 0) done();
      };
      tick();
    });
  }

  // ---- one node -------------------------------------------------------------------------------

  private async runNode(n: NodeRecord, isHandler: boolean, extra: Scope = {}): Promise<void> {
    // A retried run keeps the nodes that already succeeded.
    if (isDone(n.status)) return;
    n.startedAt = this.now();
    n.finishedAt = '';
    n.error = '';
    const logs = await this.deps.recorder.openStepLogs(n.step.name);
    n.stdout = logs.stdoutPath;
    n.stderr = logs.stderrPath;
    this.log(`step "${n.step.name}" started`);
    this.setStatus(n, NodeStatus.Running);
    try {
      const scope = await this.nodeScope(n, logs, { ...this.hooks.envFor(n), ...extra });
      if (n.step.preconditions.length > 0 && !this.input.dryRun) {
        const { met, results } = await evaluateConditions(
          n.step.preconditions,
          this.conditionEnv(scope, n.step.shell),
        );
        n.step = {
          ...n.step,
          preconditions: results.map((c) => ({
            condition: c.condition,
            expected: c.expected,
            error: c.error,
          })),
        };
        if (!met) {
          this.continues.set(n.step.name, n.step.continueOn.skipped);
          this.log(
            `step "${n.step.name}": ${results
              .filter((c) => c.error)
              .map((c) => c.error)
              .join('; ')}`,
          );
          this.finish(n, NodeStatus.Skipped, '');
          return;
        }
      }
      await this.executeWithPolicies(n, scope, logs, isHandler);
    } finally {
      // Closing (flushing) the log files does not hold up the next step; the run waits for all
      // of them before it reports its end.
      this.closing.push(
        logs
          .close()
          .catch((e: unknown) =>
            this.log(`could not close the logs of step "${n.step.name}": ${(e as Error).message}`),
          ),
      );
    }
  }

  private aborted(): boolean {
    return this.stopper.aborted;
  }

  private async executeWithPolicies(
    n: NodeRecord,
    scope: NodeScope,
    logs: StepLogs,
    isHandler: boolean,
  ): Promise<void> {
    const step = n.step;
    const retry = step.retryPolicy
      ? resolveRetryPolicy(step.retryPolicy, (t) => expandVarsSync(t, scope.fullScopes))
      : undefined;
    for (;;) {
      let result: AttemptResult;
      for (;;) {
        result = await this.attempt(n, scope, logs);
        if (result.cancelled || this.aborted()) break;
        if (!result.ok && retry && shouldRetry(retry, n.retryCount, result.exitCode)) {
          const wait = retryDelayMs(retry, n.retryCount);
          this.log(
            `step "${step.name}" failed (${result.error}); retry ${n.retryCount + 1} of ${retry.limit} in ${wait} ms`,
          );
          try {
            await this.deps.clock.sleep(wait, this.stopper.signal);
          } catch {
            break;
          }
          n.retryCount++;
          n.retriedAt = this.now();
          this.persist();
          continue;
        }
        break;
      }
      if (result.cancelled || this.aborted()) {
        this.finish(
          n,
          NodeStatus.Cancelled,
          result.error || (this.stopper.timedOut ? 'run timed out' : 'stopped'),
        );
        return;
      }
      n.doneCount++;
      if (step.output && result.output !== undefined)
        n.outputs = { ...n.outputs, [step.output]: result.output };
      if (result.exitCode !== null) n.exitCode = result.exitCode;

      const repeat = step.repeatPolicy;
      if (
        repeat &&
        repeatAllowed(repeat, n.doneCount) &&
        (await this.shouldRepeat(n, scope, result))
      ) {
        const wait = repeatDelayMs(repeat, n.doneCount);
        this.log(
          `step "${step.name}" repeats (${repeat.mode}) after ${wait} ms, execution ${n.doneCount + 1}`,
        );
        if (n.children.length > 0) {
          n.childrenRepeated = [...n.childrenRepeated, ...n.children];
          n.children = [];
        }
        this.persist();
        try {
          await this.deps.clock.sleep(wait, this.stopper.signal);
        } catch {
          this.finish(n, NodeStatus.Cancelled, this.stopper.timedOut ? 'run timed out' : 'stopped');
          return;
        }
        continue;
      }

      const verdict = stepVerdict(step.continueOn, result);
      this.continues.set(step.name, verdict.continues);
      if (!result.ok && isHandler) this.handlerFailed = true;
      if (verdict.failedButContinued) this.failedButContinued.add(step.name);
      this.finish(n, verdict.status, verdict.error);
      return;
    }
  }

  /** Repeat decision (peer-behaviour 4.6), evaluated with the step's own fresh output. */
  private async shouldRepeat(
    n: NodeRecord,
    scope: NodeScope,
    result: AttemptResult,
  ): Promise<boolean> {
    const p = n.step.repeatPolicy;
    if (!p || this.aborted()) return false;
    let holds: boolean;
    if (p.condition !== undefined) {
      const fresh: NodeScope = {
        ...scope,
        fullScopes: [n.outputs, ...scope.fullScopes],
        commandScopes: [n.outputs, ...scope.commandScopes],
      };
      if (p.expected !== undefined) {
        const got = (
          await expandVars(p.condition, fresh.fullScopes, { backticks: this.backticks })
        ).trim();
        holds = matchExpected(got, p.expected);
      } else {
        const r = await this.conditionEnv(fresh, n.step.shell).runCommand(
          expandVarsSync(p.condition, fresh.commandScopes),
        );
        holds = r.exitCode === 0;
      }
    } else {
      holds = repeatHoldsByExit(p, result);
    }
    return repeatsWhen(p, holds);
  }

  // ---- attempts -------------------------------------------------------------------------------

  private async attempt(n: NodeRecord, scope: NodeScope, logs: StepLogs): Promise<AttemptResult> {
    const p = n.step.parallel;
    if (!p) return this.executeOne(n, scope, logs, undefined);

    let items = [...p.items];
    if (p.variable !== undefined) {
      const value = await expandVars(p.variable, scope.fullScopes, { backticks: this.backticks });
      items = value === p.variable ? [] : splitParallelItems(value);
    }
    if (items.length === 0) return { ...FAILED, error: 'parallel has no items' };
    if (items.length > 1000)
      return { ...FAILED, error: `parallel has ${items.length} items; at most 1000 are allowed` };
    const isChild = n.step.executor.type === 'dag';
    if (isChild) items = [...new Set(items)]; // identical params would be the same child run

    const results: { item: string; r: AttemptResult; child?: ChildSummary }[] = [];
    let next = 0;
    const limit = p.maxConcurrent > 0 ? p.maxConcurrent : items.length;
    const worker = async (): Promise<void> => {
      while (next < items.length && !this.aborted()) {
        const item = items[next++] ?? '';
        const child: { summary?: ChildSummary } = {};
        const r = await this.executeOne(n, scope, logs, item, child);
        results.push({ item, r, ...(child.summary ? { child: child.summary } : {}) });
      }
    };
    await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
    if (this.aborted())
      return {
        ...FAILED,
        cancelled: true,
        error: this.stopper.timedOut ? 'run timed out' : 'stopped',
      };

    const failed = results.filter((x) => !x.r.ok);
    let output: string;
    if (isChild) {
      const summaries = results.flatMap((x) => (x.child ? [x.child] : []));
      output = JSON.stringify(
        {
          summary: {
            total: results.length,
            succeeded: results.length - failed.length,
            failed: failed.length,
          },
          results: summaries,
          outputs: summaries
            .filter((s) => s.status === 'finished' || s.status === 'partial success')
            .map((s) => s.outputs),
        },
        null,
        2,
      );
      logs.stdout.write(`${output}\n`);
    } else {
      output = JSON.stringify(results.map((x) => x.r.output ?? ''));
    }
    return {
      ok: failed.length === 0,
      partial: results.some((x) => x.r.partial),
      cancelled: false,
      exitCode: failed.length === 0 ? 0 : (failed[0]?.r.exitCode ?? 1),
      error:
        failed.length === 0
          ? ''
          : `parallel execution failed: ${failed.length} of ${results.length} item(s) failed (first: ${failed[0]?.r.error ?? ''})`,
      output,
      rawOutput: output,
    };
  }

  private async executeOne(
    n: NodeRecord,
    baseScope: NodeScope,
    logs: StepLogs,
    item: string | undefined,
    child?: { summary?: ChildSummary },
  ): Promise<AttemptResult> {
    const scope: NodeScope =
      item === undefined
        ? baseScope
        : {
            ...baseScope,
            commandScopes: [{ ITEM: item }, ...baseScope.commandScopes],
            fullScopes: [{ ITEM: item }, ...baseScope.fullScopes],
            env: { ...baseScope.env, ITEM: item },
          };
    if (n.step.executor.type === 'dag') return this.runChild(n, scope, logs, item, child);

    if (!existsSync(scope.cwd) || !statSync(scope.cwd).isDirectory())
      return { ...FAILED, error: `working directory ${scope.cwd} does not exist` };
    const executor = this.input.dryRun
      ? dryExecutor
      : (this.hooks.executorFor(n.step) ?? this.deps.executors[n.step.executor.type]);
    if (!executor)
      return {
        ...FAILED,
        error: `the ${n.step.executor.type} executor is not available in this process`,
      };

    const step = await this.expandStep(n.step, scope);
    const wantsCapture =
      step.output !== undefined ||
      step.continueOn.output.length > 0 ||
      step.repeatPolicy?.condition !== undefined;
    // One controller per execution: listeners stay per step (a shared signal warns past 10).
    const own = new AbortController();
    const relay = (): void => own.abort(this.stopper.signal.reason);
    this.stopper.signal.addEventListener('abort', relay, { once: true });
    if (this.stopper.signal.aborted) own.abort(this.stopper.signal.reason);
    let outcome: ExecutionOutcome;
    try {
      outcome = await executor.run(
        {
          step,
          dag: this.dag,
          cwd: scope.cwd,
          env: scope.env,
          defaultShell: this.deps.defaultShell,
          stdout: logs.stdout,
          stderr: logs.stderr,
          stop: {
            abort: this.stopper.signal,
            signal: step.signalOnStop as NodeJS.Signals,
            graceMs: this.dag.maxCleanUpTimeSec * 1000,
          },
          ...(wantsCapture ? { captureLimit: this.dag.maxOutputSize } : {}),
          run: {
            name: this.r.name,
            dagRunId: this.r.dagRunId,
            root: { name: this.r.root.name, dagRunId: this.r.root.dagRunId },
          },
        },
        (pid) => {
          n.pid = pid;
          this.persist();
        },
      );
    } catch (e) {
      return {
        ...FAILED,
        error: `the ${step.executor.type} executor failed: ${(e as Error).message}`,
      };
    }
    delete n.pid;
    if (this.aborted()) return stoppedResult(outcome);
    return resultOfOutcome(outcome, step.output !== undefined, this.dag.maxOutputSize);
  }

  /** The step with its command, script, paths and executor config expanded for this execution. */
  private async expandStep(step: Step, scope: NodeScope): Promise<Step> {
    const cmd = (t: string): string => expandVarsSync(t, scope.commandScopes);
    const full = (t: string): Promise<string> =>
      expandVars(t, scope.fullScopes, { backticks: this.backticks });
    const config = await expandDeep(step.executor.config, full);
    return {
      ...step,
      ...(step.command !== undefined ? { command: cmd(step.command) } : {}),
      args: step.args.map(cmd),
      ...(step.cmdWithArgs !== undefined ? { cmdWithArgs: cmd(step.cmdWithArgs) } : {}),
      ...(step.script !== undefined ? { script: cmd(step.script) } : {}),
      ...(step.stdout !== undefined ? { stdout: resolve(scope.cwd, await full(step.stdout)) } : {}),
      ...(step.stderr !== undefined ? { stderr: resolve(scope.cwd, await full(step.stderr)) } : {}),
      executor: { type: step.executor.type, config: config as Record<string, unknown> },
    };
  }

  // ---- child DAGs -----------------------------------------------------------------------------

  private async runChild(
    n: NodeRecord,
    scope: NodeScope,
    logs: StepLogs,
    item: string | undefined,
    out?: { summary?: ChildSummary },
  ): Promise<AttemptResult> {
    const children = this.deps.children;
    if (!children) return { ...FAILED, error: 'child DAG runs are not available in this process' };
    const full = (t: string): Promise<string> =>
      expandVars(t, scope.fullScopes, { backticks: this.backticks });
    const target = (await full(n.step.run ?? '')).trim();
    const params = n.step.params !== undefined ? await full(n.step.params) : (item ?? '');
    const dagRunId = childRunId(
      `${this.r.dagRunId}:${n.step.name}:${params}:${n.doneCount}:${n.retryCount}`,
    );
    const ref: ChildRunRef = { dagRunId, name: target, params, status: RunStatus.Running };
    n.children = [...n.children, ref];
    this.persist();
    const res = await children.run({
      target,
      localDags: this.input.localDags ?? [],
      workingDir: this.workingDir,
      params,
      dagRunId,
      parent: { name: this.r.name, dagRunId: this.r.dagRunId },
      root: this.r.root,
      workerSelector: n.step.workerSelector,
      env: scope.env,
      ...(scope.env.TRACEPARENT !== undefined ? { traceparent: scope.env.TRACEPARENT } : {}),
      abort: this.stopper.signal,
      dryRun: this.input.dryRun ?? false,
    });
    n.children = n.children.map((c) =>
      c.dagRunId === dagRunId ? { ...c, name: res.name, status: res.status } : c,
    );
    this.persist();
    const label = runStatusLabel[res.status];
    const summary: ChildSummary = {
      name: res.name,
      dagRunId,
      params,
      outputs: { ...res.outputs },
      status: label,
    };
    if (out) out.summary = summary;
    const json = childOutputJson(res.name, params, res.outputs);
    if (item === undefined || !n.step.parallel) logs.stdout.write(`${json}\n`);
    if (this.aborted()) return { ...FAILED, cancelled: true, error: 'stopped' };
    if (res.error)
      return { ...FAILED, exitCode: 1, error: res.error, output: json, rawOutput: json };
    const ok = res.status === RunStatus.Succeeded || res.status === RunStatus.PartiallySucceeded;
    return {
      ok,
      partial: res.status === RunStatus.PartiallySucceeded,
      cancelled: false,
      exitCode: ok ? 0 : 1,
      error: ok ? '' : `child DAG run ${dagRunId} of "${res.name}" ended with status: ${label}`,
      output: json,
      rawOutput: json,
    };
  }

  // ---- run hooks ------------------------------------------------------------------------------

  /** Sets up each run hook once, before the first step (never in a dry run). */
  private async setUpHooks(): Promise<void> {
    if (this.input.dryRun) return;
    await this.hooks.setUp(this.deps.runHooks ?? [], () => ({
      dag: this.dag,
      record: this.r,
      workingDir: this.workingDir,
      env: this.baseProcessEnv(),
      log: (line) => this.log(line),
      abort: this.stopper.signal,
    }));
  }

  // ---- handlers and final status --------------------------------------------------------------

  private finalStatus(): RunStatus {
    return evaluateRunStatus(
      this.r.nodes.map((n) => ({
        status: n.status,
        failedButContinued: this.failedButContinued.has(n.step.name),
      })),
      {
        cancelled: this.stopper.stopping || this.preconditionFailed,
        runError: this.stopper.timedOut || this.handlerFailed || this.runError !== '',
      },
    );
  }

  /** onSuccess (finished or partial success) / onFailure / onCancel, then onExit (spec: Events). */
  private async runHandlers(): Promise<void> {
    const status = this.finalStatus();
    const first: HandlerKind | undefined =
      status === RunStatus.Succeeded || status === RunStatus.PartiallySucceeded
        ? 'success'
        : status === RunStatus.Failed
          ? 'failure'
          : status === RunStatus.Cancelled
            ? 'cancel'
            : undefined;
    this.stopper.startHandlerPhase(this.input.stop);
    for (const kind of [first, 'exit' as const]) {
      if (!kind) continue;
      const step = this.dag.handlerOn[kind];
      if (!step) continue;
      const key = handlerNodeName[kind] as 'onSuccess' | 'onFailure' | 'onCancel' | 'onExit';
      const node = newNodeRecord(step);
      this.r[key] = node;
      const label = runStatusLabel[this.finalStatus()];
      await this.runNode(node, true, { DAG_RUN_STATUS: label });
    }
  }
}

/** A child run as the parallel aggregate lists it. */
interface ChildSummary {
  readonly name: string;
  readonly dagRunId: string;
  readonly params: string;
  readonly outputs: Record<string, string>;
  readonly status: string;
}

/** Expands every string inside a JSON-like value. */
const expandDeep = async (v: unknown, f: (s: string) => Promise<string>): Promise<unknown> => {
  if (typeof v === 'string') return f(v);
  if (Array.isArray(v)) return Promise.all(v.map((x) => expandDeep(x, f)));
  if (typeof v === 'object' && v !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = await expandDeep(x, f);
    return out;
  }
  return v;
};
