import { randomUUID } from 'node:crypto';
import { Worker, WaitingError, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { RunStatus, type Clock } from '@trellis/core';
import {
  isUnavailable,
  matchesSelector,
  type ClaimResponse,
  type CoordinatorClient,
  type HeartbeatResponse,
  type Labels,
  type RunningTaskMsg,
  type WorkerCommand,
} from '@trellis/coordinator';
import {
  childRunResult,
  hostedRunKey,
  newRunRecord,
  resolveRunParams,
  type ChildRunRequest,
  type ChildRunResult,
  type ChildRunner,
  type CommandRunner,
  type EngineEvents,
  type ExecutorRegistry,
  type RunHook,
} from '@trellis/engine';
import type { Dag, DagRunRecord, RunRef } from '@trellis/spec';
import { runLogPathIn } from '@trellis/store';
import { RunHost } from '../host/run-host.js';
import { DEFAULT_PREFIX, bullQueueName, type RunJobData } from '../remote/job-data.js';
import { GrpcRecorder } from './grpc-recorder.js';
import { Outbox } from './outbox.js';
import { runChildElsewhere } from './remote-child.js';

/** Everything a worker process needs, injected once (the CLI wires it). */
export interface WorkerAgentDeps {
  /** Shown in `GET /workers` and recorded as the runs' `owner.workerId`. */
  readonly id: string;
  readonly labels: Labels;
  /** Runs executed at once (top-level; child runs execute inside their parent's slot). */
  readonly concurrency: number;
  readonly client: CoordinatorClient;
  readonly redis: Redis;
  readonly clock: Clock;
  readonly executors: ExecutorRegistry;
  /** Run-level hooks (DAG-level container, mail notifications), as in a local run. */
  readonly runHooks?: readonly RunHook[];
  readonly commands: CommandRunner;
  readonly systemEnv: Readonly<Record<string, string>>;
  readonly defaultShell: string;
  readonly events?: EngineEvents;
  /** This process, as recorded in the runs' owner. */
  readonly owner: { readonly pid: number; readonly host: string; readonly processStart: string };
  /** One line per notable event (joined, run started, coordinator lost and back). */
  readonly log: (line: string) => void;
  /** Redis key prefix. @default `trellis` */
  readonly prefix?: string;
  /** @default 1000 (issue 6: heartbeats every second) */
  readonly heartbeatEveryMs?: number;
}

interface ActiveRun {
  readonly ref: RunRef;
  readonly root: RunRef;
  readonly parent: RunRef | undefined;
  readonly startedAt: string;
  readonly stop: AbortController;
  dropped: boolean;
}

/**
 * `trellis worker` (ARCHITECTURE.md section 3): heartbeats every second, consumes the dispatch
 * queues the coordinator names (at most `concurrency` runs at once across all of them), claims
 * each run before executing it (so a run never executes twice), runs it with the engine and a
 * {@link GrpcRecorder}, and follows cancel/drop commands. While the coordinator is away the runs
 * go on and their status and logs wait in the outbox.
 */
export class WorkerAgent implements ChildRunner {
  state: 'idle' | 'running' | 'stopping' | 'stopped' = 'idle';
  readonly #deps: WorkerAgentDeps;
  readonly #incarnation = randomUUID();
  readonly #outbox: Outbox;
  readonly #bull = new Map<string, Worker<RunJobData>>();
  readonly #runs = new Map<string, ActiveRun>();
  readonly #stop = new AbortController();
  #slots = 0;
  #paused = false;
  #accepting = true;
  #logDir = '';
  #connected: boolean | undefined;
  #heartbeats: Promise<void> | undefined;
  #commands: Promise<void> | undefined;
  readonly #idle = new Set<() => void>();
  readonly #host: RunHost;

  constructor(deps: WorkerAgentDeps) {
    this.#deps = deps;
    this.#host = new RunHost({
      clock: deps.clock,
      executors: deps.executors,
      commands: deps.commands,
      ...(deps.events ? { events: deps.events } : {}),
      systemEnv: deps.systemEnv,
      defaultShell: deps.defaultShell,
      ...(deps.runHooks ? { runHooks: deps.runHooks } : {}),
    });
    this.#outbox = new Outbox({
      client: () => deps.client,
      clock: deps.clock,
      warn: (m) => deps.log(`warning: ${m}`),
      onDropped: (key) => this.#drop(key, 'the coordinator no longer assigns it to this worker'),
      onConnectivity: (up) =>
        deps.log(
          up
            ? 'coordinator reachable again: buffered status and logs delivered'
            : 'coordinator unreachable: runs go on, status and logs are buffered',
        ),
    });
  }

  get id(): string {
    return this.#deps.id;
  }

  /** Runs executing now (children included). */
  get activeRuns(): number {
    return this.#runs.size;
  }

  start(): void {
    this.state = 'running';
    this.#outbox.start();
    this.#heartbeats = this.#heartbeatLoop();
    this.#commands = this.#commandLoop();
  }

  /**
   * Graceful stop (SIGTERM): takes no new runs, lets running ones finish for `graceMs`, then
   * stops them (they end cancelled), delivers what is buffered (at most `flushMs`), and closes.
   */
  async stop(graceMs: number, flushMs = 10_000): Promise<void> {
    if (this.state === 'stopping' || this.state === 'stopped') return;
    this.state = 'stopping';
    this.#accepting = false;
    await Promise.all([...this.#bull.values()].map((w) => w.pause(true).catch(() => undefined)));
    await this.#beat().catch(() => undefined); // tell the coordinator at once
    if (this.#slots > 0 || this.#runs.size > 0) {
      this.#deps.log(
        `stopping: letting ${this.#runs.size} run(s) finish (at most ${Math.round(graceMs / 1000)} s)`,
      );
      const timer = new AbortController();
      await Promise.race([
        this.#whenIdle(),
        this.#deps.clock.sleep(graceMs, timer.signal).catch(() => undefined),
      ]);
      timer.abort();
      for (const r of this.#runs.values()) r.stop.abort();
      await this.#whenIdle();
    }
    const flushTimer = new AbortController();
    const flushed = this.#outbox.drained(flushTimer.signal);
    await Promise.race([
      flushed,
      this.#deps.clock.sleep(flushMs, flushTimer.signal).catch(() => undefined),
    ]);
    flushTimer.abort();
    this.#stop.abort();
    await Promise.all([...this.#bull.values()].map((w) => w.close(true).catch(() => undefined)));
    await this.#outbox.stop();
    await this.#heartbeats;
    await this.#commands;
    this.#deps.client.close();
    this.state = 'stopped';
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop(0, 0);
  }

  // ---- heartbeats and commands ----------------------------------------------------------------

  async #heartbeatLoop(): Promise<void> {
    const every = this.#deps.heartbeatEveryMs ?? 1_000;
    let wait = 0;
    while (!this.#stop.signal.aborted) {
      try {
        await this.#deps.clock.sleep(wait, this.#stop.signal);
      } catch {
        return;
      }
      try {
        await this.#beat();
        wait = every;
      } catch (e) {
        if (this.#connected !== false)
          this.#deps.log(`coordinator unreachable (${(e as Error).message}): retrying`);
        this.#connected = false;
        // Back-off up to 4 s: a returning coordinator sees this worker again within seconds.
        wait = Math.min(Math.max(wait * 2, every), 4 * every);
      }
    }
  }

  async #beat(): Promise<void> {
    const tasks: RunningTaskMsg[] = [...this.#runs.values()].map((r) => ({
      run: { name: r.ref.name, dagRunId: r.ref.dagRunId },
      root: { name: r.root.name, dagRunId: r.root.dagRunId },
      parent: r.parent ? { name: r.parent.name, dagRunId: r.parent.dagRunId } : null,
      startedAt: r.startedAt,
    }));
    const reply = await this.#deps.client.heartbeat({
      workerId: this.#deps.id,
      labels: { ...this.#deps.labels },
      capacity: this.#deps.concurrency,
      runningTasks: tasks,
      incarnation: this.#incarnation,
      accepting: this.#accepting,
    });
    if (this.#connected !== true)
      this.#deps.log(
        `connected to the coordinator as "${this.#deps.id}" (labels ${JSON.stringify(this.#deps.labels)}, concurrency ${this.#deps.concurrency})`,
      );
    this.#connected = true;
    this.#apply(reply);
  }

  #apply(reply: HeartbeatResponse): void {
    this.#logDir = reply.logDir;
    if (this.#accepting) for (const q of reply.queues) this.#consume(q);
    for (const c of reply.cancel) this.#cancel(c.name, c.dagRunId);
    for (const d of reply.drop) this.#dropRef(d.name, d.dagRunId);
  }

  async #commandLoop(): Promise<void> {
    let wait = 0;
    while (!this.#stop.signal.aborted) {
      try {
        await this.#deps.clock.sleep(wait, this.#stop.signal);
      } catch {
        return;
      }
      const started = this.#deps.clock.now().getTime();
      await new Promise<void>((resolve) => {
        const stream = this.#deps.client.watchCommands({
          workerId: this.#deps.id,
          incarnation: this.#incarnation,
        });
        const onAbort = (): void => stream.cancel();
        this.#stop.signal.addEventListener('abort', onAbort, { once: true });
        stream.on('data', (c: WorkerCommand) => this.#onCommand(c));
        const done = (): void => {
          this.#stop.signal.removeEventListener('abort', onAbort);
          resolve();
        };
        stream.on('error', done);
        stream.on('end', done);
      });
      // A stream that lived long reconnects at once; one that failed at once backs off.
      const lived = this.#deps.clock.now().getTime() - started;
      wait = lived > 5_000 ? 0 : Math.min(Math.max(wait * 2, 250), 4_000);
    }
  }

  #onCommand(c: WorkerCommand): void {
    if (c.kind === 'KIND_CONSUME' && c.queue && this.#accepting) this.#consume(c.queue);
    if (!c.run) return;
    if (c.kind === 'KIND_CANCEL') this.#cancel(c.run.name, c.run.dagRunId);
    else if (c.kind === 'KIND_DROP') this.#dropRef(c.run.name, c.run.dagRunId);
  }

  #cancel(name: string, dagRunId: string): void {
    for (const r of this.#runs.values())
      if (r.ref.name === name && r.ref.dagRunId === dagRunId && !r.stop.signal.aborted) {
        this.#deps.log(`stopping run ${dagRunId} of DAG "${name}" (stop requested)`);
        r.stop.abort();
      }
  }

  #dropRef(name: string, dagRunId: string): void {
    for (const [key, r] of this.#runs)
      if (r.ref.name === name && r.ref.dagRunId === dagRunId)
        this.#drop(key, 'it was marked failed while this worker was away');
  }

  #drop(key: string, why: string): void {
    const r = this.#runs.get(key);
    if (!r || r.dropped) return;
    r.dropped = true;
    this.#deps.log(`dropping run ${r.ref.dagRunId} of DAG "${r.ref.name}": ${why}`);
    this.#outbox.discard(key);
    r.stop.abort();
  }

  // ---- consuming dispatch queues --------------------------------------------------------------

  #consume(queue: string): void {
    if (this.#bull.has(queue)) return;
    const w = new Worker<RunJobData>(
      bullQueueName(queue),
      (job, token) => this.#process(job, token),
      {
        connection: this.#deps.redis,
        prefix: this.#deps.prefix ?? DEFAULT_PREFIX,
        concurrency: this.#deps.concurrency,
        // A job whose worker died is not handed out again: the coordinator fails the run
        // (lost-worker rule) and a second execution is refused at claim anyway.
        maxStalledCount: 0,
      },
    );
    w.on('error', (e) => this.#deps.log(`warning: queue ${queue}: ${e.message}`));
    this.#bull.set(queue, w);
    if (this.#paused) void w.pause(true).catch(() => undefined);
    this.#deps.log(`consuming dispatch queue ${queue}`);
  }

  async #process(job: Job<RunJobData>, token: string | undefined): Promise<void> {
    if (!this.#accepting || this.#slots >= this.#deps.concurrency) {
      // Fetched by a second queue's consumer while the slots were full: back to its queue.
      await job.moveToWait(token);
      throw new WaitingError();
    }
    this.#slots++;
    this.#updatePause();
    try {
      const claim = await this.#claim(job.data.record);
      if (claim === undefined) {
        await job.moveToWait(token);
        throw new WaitingError();
      }
      if (!claim.granted) {
        this.#deps.log(`skipping run ${job.data.record.dagRunId}: ${claim.reason}`);
        return;
      }
      await this.#execute(job.data, claim);
    } finally {
      this.#slots--;
      this.#updatePause();
      this.#notifyIdle();
    }
  }

  /** Claims a run; waits out a coordinator outage. Undefined when the worker stops meanwhile. */
  async #claim(record: DagRunRecord): Promise<ClaimResponse | undefined> {
    let wait = 100;
    while (this.#accepting) {
      try {
        return await this.#deps.client.claim({
          workerId: this.#deps.id,
          run: { name: record.name, dagRunId: record.dagRunId },
          root: { name: record.root.name, dagRunId: record.root.dagRunId },
          host: this.#deps.owner.host,
          pid: this.#deps.owner.pid,
          processStart: this.#deps.owner.processStart,
        });
      } catch (e) {
        if (!isUnavailable(e)) throw e;
        await this.#deps.clock.sleep(wait).catch(() => undefined);
        wait = Math.min(wait * 2, 2_000);
      }
    }
    return undefined;
  }

  #updatePause(): void {
    const full = !this.#accepting || this.#slots >= this.#deps.concurrency;
    if (full === this.#paused) return;
    this.#paused = full;
    for (const w of this.#bull.values()) {
      if (full) void w.pause(true).catch(() => undefined);
      else if (this.#accepting) void w.resume();
    }
  }

  async #execute(data: RunJobData, claim: ClaimResponse): Promise<void> {
    const record = JSON.parse(claim.recordJson) as DagRunRecord;
    this.#logDir = claim.logDir || this.#logDir;
    this.#deps.log(`running run ${record.dagRunId} of DAG "${record.name}"`);
    await this.#runRecord(record, data.dag, data.localDags, claim.runLogSize, undefined);
  }

  async #runRecord(
    record: DagRunRecord,
    dag: Dag,
    localDags: readonly Dag[],
    runLogSize: number,
    opts: { snapshotJson: string; abort: AbortSignal } | undefined,
  ): Promise<DagRunRecord> {
    const ref = { name: record.name, dagRunId: record.dagRunId };
    const key = hostedRunKey(record);
    const stop = new AbortController();
    opts?.abort.addEventListener('abort', () => stop.abort(), { once: true });
    const active: ActiveRun = {
      ref,
      root: record.root,
      parent: record.parent,
      startedAt: record.startedAt,
      stop,
      dropped: false,
    };
    this.#runs.set(key, active);
    const recorder = new GrpcRecorder({
      workerId: this.#deps.id,
      ref,
      root: record.root,
      runLogPath: record.log,
      runLogSize,
      ...(opts ? { snapshotJson: opts.snapshotJson } : {}),
      clock: this.#deps.clock,
      outbox: this.#outbox,
      runKey: key,
    });
    try {
      const run = this.#host.execute({
        record,
        dag,
        localDags,
        recorder,
        children: this,
        stop: stop.signal,
      });
      return await run.done;
    } finally {
      this.#runs.delete(key);
      this.#notifyIdle();
    }
  }

  // ---- child runs (call: steps) execute on this worker, recorded under their root -----------
  // A child whose selector (the step's workerSelector, else the child DAG's) this worker's labels
  // do not satisfy is started by the coordinator on matching workers (docs/decisions.md).

  async run(req: ChildRunRequest): Promise<ChildRunResult> {
    const dag = req.localDags.find((d) => d.name === req.target);
    const fail = (error: string): ChildRunResult => ({
      name: req.target,
      dagRunId: req.dagRunId,
      status: RunStatus.Failed,
      outputs: {},
      error,
    });
    if (!dag)
      return fail(
        `child DAG ${JSON.stringify(req.target)} could not be started on worker "${this.#deps.id}": a worker runs child DAGs defined in the same file as their parent; move it into that file`,
      );
    const selector =
      Object.keys(req.workerSelector).length > 0 ? req.workerSelector : dag.workerSelector;
    if (!matchesSelector(this.#deps.labels, selector))
      return runChildElsewhere(
        {
          client: this.#deps.client,
          clock: this.#deps.clock,
          log: this.#deps.log,
          workerId: this.#deps.id,
        },
        req,
        dag,
        selector,
      );
    const params = resolveRunParams(dag, req.params, false);
    const record = newRunRecord(dag, {
      dagRunId: req.dagRunId,
      params: typeof params === 'string' ? [] : params,
      root: req.root,
      parent: req.parent,
      status: RunStatus.Running,
      now: this.#deps.clock.now().toISOString(),
      log: runLogPathIn(this.#logDir, { name: dag.name, dagRunId: req.dagRunId }),
      owner: { ...this.#deps.owner, workerId: this.#deps.id },
    });
    const final = await this.#runRecord(record, dag, req.localDags, 0, {
      snapshotJson: JSON.stringify({ dag, localDags: req.localDags }),
      abort: req.abort,
    });
    return childRunResult(dag.name, final);
  }

  // ---- idle tracking --------------------------------------------------------------------------

  #whenIdle(): Promise<void> {
    if (this.#runs.size === 0 && this.#slots === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.add(resolve));
  }

  #notifyIdle(): void {
    if (this.#runs.size !== 0 || this.#slots !== 0) return;
    for (const r of this.#idle) r();
    this.#idle.clear();
  }
}
