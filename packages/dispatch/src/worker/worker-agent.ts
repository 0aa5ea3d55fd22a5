import type { ChildRunRequest, ChildRunResult, ChildRunner } from '@trellis/engine';
import { ActiveRuns } from './active-runs.js';
import { CoordinatorLink } from './coordinator-link.js';
import { stopGracefully } from './graceful-stop.js';
import { Outbox } from './outbox.js';
import { QueueConsumer } from './queue-consumer.js';
import { RunExecutor } from './run-executor.js';
import type { WorkerAgentDeps } from './worker-agent-deps.js';

export type { WorkerAgentDeps } from './worker-agent-deps.js';

/**
 * `trellis worker` (docs/architecture.md): heartbeats every second, consumes the dispatch queues
 * the coordinator names (at most `concurrency` runs at once across all of them), claims each run
 * before executing it (so a run never executes twice), runs it with the engine and a
 * `GrpcRecorder`, and follows cancel/drop commands. While the coordinator is away the runs
 * go on and their status and logs wait in the outbox.
 *
 * It wires its parts: the {@link CoordinatorLink} (heartbeats and commands), the
 * {@link QueueConsumer} (dispatch queues, slots, claims), the {@link RunExecutor} (claimed runs and
 * child runs, on the run host) and the {@link Outbox} their recorders deliver through.
 */
export class WorkerAgent implements ChildRunner {
  state: 'idle' | 'running' | 'stopping' | 'stopped' = 'idle';
  readonly #deps: WorkerAgentDeps;
  readonly #runs = new ActiveRuns();
  readonly #executor: RunExecutor;
  readonly #outbox: Outbox;
  readonly #queues: QueueConsumer;
  readonly #link: CoordinatorLink;
  #drained: () => void = () => undefined;
  readonly #drain = new Promise<void>((resolve) => (this.#drained = resolve));

  constructor(deps: WorkerAgentDeps) {
    this.#deps = deps;
    this.#outbox = new Outbox({
      client: () => deps.client,
      clock: deps.clock,
      dir: deps.outboxDir,
      ...(deps.outboxMaxBytes === undefined ? {} : { maxBytes: deps.outboxMaxBytes }),
      log: deps.log,
      warn: (m) => deps.log(`warning: ${m}`),
      onDropped: (key) =>
        this.#link.drop(key, 'the coordinator no longer assigns it to this worker'),
    });
    this.#executor = new RunExecutor(deps, this.#runs, this.#outbox);
    this.#queues = new QueueConsumer(deps, this.#runs, (data, claim) =>
      this.#executor.execute(data, claim),
    );
    this.#link = new CoordinatorLink({
      agent: deps,
      runs: this.#runs,
      outbox: this.#outbox,
      queues: this.#queues,
      onLogDir: (dir) => (this.#executor.logDir = dir),
      onDrain: () => this.#drained(),
    });
  }

  get id(): string {
    return this.#deps.id;
  }

  /** Resolves when an operator drains this worker (`trellis worker drain`): stop it then. */
  get drainRequested(): Promise<void> {
    return this.#drain;
  }

  /** Runs executing now (children included). */
  get activeRuns(): number {
    return this.#runs.size;
  }

  start(): void {
    this.state = 'running';
    this.#outbox.start();
    this.#link.start();
  }

  /**
   * Graceful stop (SIGTERM): takes no new runs, lets running ones finish for `graceMs`, then
   * stops them (they end cancelled), delivers what is buffered (at most `flushMs`), and closes.
   */
  async stop(graceMs: number, flushMs = 10_000): Promise<void> {
    if (this.state === 'stopping' || this.state === 'stopped') return;
    this.state = 'stopping';
    await stopGracefully(
      {
        deps: this.#deps,
        queues: this.#queues,
        link: this.#link,
        runs: this.#runs,
        outbox: this.#outbox,
      },
      graceMs,
      flushMs,
    );
    this.state = 'stopped';
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop(0, 0);
  }

  /** A child run (call: step) of a run here: on this worker, or on matching ones. */
  run(req: ChildRunRequest): Promise<ChildRunResult> {
    return this.#executor.run(req);
  }
}
