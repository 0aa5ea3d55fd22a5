import { randomUUID } from 'node:crypto';
import {
  isWorkerRefused,
  retryWaitMs,
  type HeartbeatResponse,
  type WorkerCommand,
} from '@trellis/coordinator/client';
import type { ActiveRuns } from './active-runs.js';
import type { Outbox } from './outbox.js';
import type { QueueConsumer } from './queue-consumer.js';
import type { WorkerAgentDeps } from './worker-agent-deps.js';

/** What the link reaches of the worker: its runs, their outbox and its dispatch queues. */
export interface CoordinatorLinkDeps {
  readonly agent: Pick<
    WorkerAgentDeps,
    | 'id'
    | 'labels'
    | 'concurrency'
    | 'client'
    | 'clock'
    | 'log'
    | 'heartbeatEveryMs'
    | 'owner'
    | 'version'
  >;
  readonly runs: ActiveRuns;
  readonly outbox: Pick<Outbox, 'discard'>;
  readonly queues: Pick<QueueConsumer, 'accepting' | 'consume' | 'state' | 'hold'>;
  /** An operator drained this worker: it stops gracefully and exits. */
  readonly onDrain: () => void;
  /** The coordinator named its log directory (child runs started here keep their logs there). */
  readonly onLogDir: (dir: string) => void;
}

/**
 * A worker's two links to the coordinator: a heartbeat every second (its runs, its capacity;
 * the reply names the queues to consume and the runs to cancel or drop) and the command stream
 * (the same commands, at once). Both retry with back-off while the coordinator is away.
 */
export class CoordinatorLink {
  readonly #deps: CoordinatorLinkDeps;
  readonly #incarnation = randomUUID();
  readonly #stop = new AbortController();
  readonly #startedAt: string;
  #connected: boolean | undefined;
  /** The last failure was the coordinator refusing this worker (token, protocol version). */
  #refused = false;
  /** What the last failure told the operator to change ('' for none): a new advice is logged. */
  #hint = '';
  /** The coordinator address the link last saw the client on (a change is logged). */
  #address: string | undefined;
  #heartbeats: Promise<void> | undefined;
  #commands: Promise<void> | undefined;
  /** The extra heartbeat sent when a run ended or a slot freed, while it is due or in flight. */
  #prompt: Promise<void> | undefined;
  /** Another run ended while {@link #prompt} was in flight: one more heartbeat after it. */
  #again = false;

  constructor(deps: CoordinatorLinkDeps) {
    this.#deps = deps;
    this.#startedAt = deps.agent.clock.now().toISOString();
  }

  start(): void {
    this.#heartbeats = this.#heartbeatLoop();
    this.#commands = this.#commandLoop();
    this.#deps.runs.onFreed(() => this.#beatPromptly());
  }

  /** Ends both loops (the command stream is cancelled); `whenHalted` waits for them. */
  halt(): void {
    this.#stop.abort();
  }

  async whenHalted(): Promise<void> {
    await this.#heartbeats;
    await this.#commands;
    await this.#prompt;
  }

  /** One heartbeat now; rejects while the coordinator is away. */
  async beat(): Promise<void> {
    const { agent, runs, queues } = this.#deps;
    const reply = await agent.client.heartbeat({
      workerId: agent.id,
      labels: { ...agent.labels },
      capacity: agent.concurrency,
      runningTasks: runs.tasks(),
      incarnation: this.#incarnation,
      accepting: queues.accepting,
      version: agent.version ?? '',
      host: agent.owner.host,
      startedAt: this.#startedAt,
      slotsBusy: runs.slots,
      state: queues.state,
    });
    const moved = this.#noteAddress();
    if (this.#connected !== true || moved)
      agent.log(
        `connected to the coordinator as "${agent.id}" (labels ${JSON.stringify(agent.labels)}, concurrency ${agent.concurrency}, coordinator ${agent.client.address})`,
      );
    this.#connected = true;
    this.#apply(reply);
  }

  /**
   * A heartbeat soon after a run here ended or its slot was released, not up to a period later:
   * the coordinator (`GET /workers`, `svc_worker_busy_slots`) sees the slot free at once. It goes
   * once the final reports of the runs that ended before it were delivered (those ending while it
   * waits make the next one), so it lists none of them and the coordinator already freed their
   * slots. Cheap: the ends of one turn of the event loop (a slot's release, then its run's report
   * delivered) make one heartbeat, and those during it one more after it. A failure is left to
   * the heartbeat loop.
   */
  #beatPromptly(): void {
    if (this.#stop.signal.aborted) return;
    if (this.#prompt !== undefined) {
      this.#again = true;
      return;
    }
    this.#prompt = (async () => {
      do {
        await this.#deps.agent.clock.sleep(0);
        await this.#deps.runs.whenReported(this.#stop.signal); // a halt does not wait
        this.#again = false;
        if (this.#stop.signal.aborted) break;
        await this.beat().catch(() => undefined);
      } while (this.#again);
      this.#prompt = undefined;
    })();
  }

  /** Stops a run here and forgets what its outbox holds: it is no longer this worker's. */
  drop(key: string, why: string): void {
    const r = this.#deps.runs.get(key);
    if (!r || r.dropped) return;
    r.dropped = true;
    this.#deps.agent.log(`dropping run ${r.ref.dagRunId} of DAG "${r.ref.name}": ${why}`);
    this.#deps.outbox.discard(key);
    r.stop.abort();
  }

  async #heartbeatLoop(): Promise<void> {
    const { agent } = this.#deps;
    const every = agent.heartbeatEveryMs ?? 1_000;
    let wait = 0;
    while (!this.#stop.signal.aborted) {
      try {
        await agent.clock.sleep(wait, this.#stop.signal);
      } catch {
        return;
      }
      const before = agent.client.address;
      try {
        await this.beat();
        wait = every;
      } catch (e) {
        const refused = isWorkerRefused(e);
        const hint = refused ? '' : agent.client.hint(e);
        if (this.#connected !== false || refused !== this.#refused || hint !== this.#hint)
          agent.log(
            refused
              ? `the coordinator refused this worker: ${(e as { details?: string }).details ?? (e as Error).message}`
              : `coordinator unreachable (${(e as Error).message}${hint ? `; ${hint}` : ''}): retrying`,
          );
        const moved = agent.client.address !== before;
        this.#noteAddress();
        this.#connected = false;
        this.#refused = refused;
        this.#hint = hint;
        // The next coordinator at once; back-off up to 4 s once all failed: a returning
        // coordinator sees this worker again within seconds.
        wait = retryWaitMs(agent.client.ring, moved, wait, every);
      }
    }
  }

  /** Logs a move of the client to another coordinator address; true when it moved. */
  #noteAddress(): boolean {
    const now = this.#deps.agent.client.address;
    const before = this.#address;
    this.#address = now;
    if (before === undefined || before === now) return false;
    this.#deps.agent.log(`coordinator ${before} lost: moving to ${now}`);
    return true;
  }

  /** Tells the coordinator this worker exits; it forgets it at once (best effort). */
  async deregister(): Promise<void> {
    const { agent } = this.#deps;
    await agent.client
      .deregister({ workerId: agent.id, incarnation: this.#incarnation })
      .catch(() => undefined); // it forgets the worker anyway once it is silent
  }

  /** An operator's ask, from a heartbeat reply or the command stream. */
  #adminState(state: string): void {
    if (state === 'cordoned') this.#deps.queues.hold('cordoned');
    else if (state === 'draining') {
      this.#deps.queues.hold('draining');
      this.#deps.onDrain();
    } else this.#deps.queues.hold(undefined);
  }

  #apply(reply: HeartbeatResponse): void {
    this.#deps.onLogDir(reply.logDir);
    if (reply.adminState !== undefined) this.#adminState(reply.adminState);
    if (this.#deps.queues.accepting) for (const q of reply.queues) this.#deps.queues.consume(q);
    for (const c of reply.cancel) this.#cancel(c.name, c.dagRunId);
    for (const d of reply.drop) this.#dropRef(d.name, d.dagRunId);
  }

  async #commandLoop(): Promise<void> {
    const { clock } = this.#deps.agent;
    let wait = 0;
    while (!this.#stop.signal.aborted) {
      try {
        await clock.sleep(wait, this.#stop.signal);
      } catch {
        return;
      }
      const started = clock.now().getTime();
      await this.#watchCommands();
      // A stream that lived long reconnects at once; one that failed at once backs off.
      const lived = clock.now().getTime() - started;
      wait = lived > 5_000 ? 0 : Math.min(Math.max(wait * 2, 250), 4_000);
    }
  }

  /** Follows one command stream until it ends, fails or the worker stops. */
  #watchCommands(): Promise<void> {
    return new Promise<void>((resolve) => {
      const stream = this.#deps.agent.client.watchCommands({
        workerId: this.#deps.agent.id,
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
  }

  #onCommand(c: WorkerCommand): void {
    if (c.kind === 'KIND_CONSUME' && c.queue && this.#deps.queues.accepting)
      this.#deps.queues.consume(c.queue);
    if (c.kind === 'KIND_STATE' && c.state) this.#adminState(c.state);
    if (!c.run) return;
    if (c.kind === 'KIND_CANCEL') this.#cancel(c.run.name, c.run.dagRunId);
    else if (c.kind === 'KIND_DROP') this.#dropRef(c.run.name, c.run.dagRunId);
  }

  #cancel(name: string, dagRunId: string): void {
    for (const [, r] of this.#deps.runs.entries())
      if (r.ref.name === name && r.ref.dagRunId === dagRunId && !r.stop.signal.aborted) {
        this.#deps.agent.log(`stopping run ${dagRunId} of DAG "${name}" (stop requested)`);
        r.stop.abort();
      }
  }

  #dropRef(name: string, dagRunId: string): void {
    for (const [key, r] of this.#deps.runs.entries())
      if (r.ref.name === name && r.ref.dagRunId === dagRunId)
        this.drop(key, 'it was marked failed while this worker was away');
  }
}
