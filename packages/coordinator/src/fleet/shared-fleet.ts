import { randomUUID } from 'node:crypto';
import { AppError, ErrorCode } from '@trellis/core';
import type { Labels } from '../registry/selector.js';
import { UNHEALTHY_MS } from '../registry/worker-health.js';
import { FORGET_AFTER_MS, type WorkerState } from '../registry/worker-registry.js';
import { busySlots } from '../server/busy-slots.js';
import type { CoordinatorContext } from '../server/coordinator-context.js';
import { runKey } from '../server/remote-runs.js';
import type { FleetPort, FleetSnapshot, FleetWorker, RemoteWorker } from './fleet-port.js';
import { fewerOfAny, forgetClaimedElsewhere } from './pending-elsewhere.js';
import { applyStateRequests } from './state-requests.js';

/** What the shared view asks of the coordinator around it. */
export interface SharedFleetHooks {
  /** The address this coordinator's workers dial (for the others' messages). */
  advertise(): string;
  /** A dispatch queue another coordinator put runs on: this one's workers consume it too. */
  addQueue(name: string): void;
  /** Applies an operator's state, handed on by another coordinator, to a worker connected here. */
  setState(id: string, state: WorkerState): void;
}

/**
 * Failed syncs in a row before the fallback to this coordinator's own workers is reported: the
 * first sync runs while the Redis connection is still being made, and a blip is not news.
 */
const WARN_AFTER_FAILURES = 3;

/**
 * The workers of every coordinator sharing one Redis (docs/ha.md, "Workers across
 * coordinators"). Every `everyMs` it publishes this coordinator's workers (heartbeat time,
 * labels, capacity, slots in use) and reads the others'; between two syncs, availability, the
 * lost-worker rule and `GET /workers` read the copy held here, so no hot path waits on Redis.
 * The local registry stays authoritative for local workers. When Redis is away the copy ages
 * (its heartbeats grow old) and the coordinator falls back to its own workers; said once,
 * when it has lasted `WARN_AFTER_FAILURES` syncs.
 */
export class SharedFleet {
  readonly id = randomUUID();
  readonly #ctx: CoordinatorContext;
  readonly #port: FleetPort;
  readonly #hooks: SharedFleetHooks;
  readonly #everyMs: number;
  readonly #stop = new AbortController();
  #loop: Promise<void> | undefined;
  /** Workers heard by other coordinators, by id: the freshest entry. */
  #remote = new Map<string, RemoteWorker>();
  /** The selectors of runs live other coordinators dispatched that no worker claimed yet. */
  #pending: readonly Labels[] = [];
  readonly #queues = new Set<string>();
  /** Each coordinator's last `publishedAtMs` seen, and when (this clock) it changed. */
  readonly #published = new Map<string, { value: number; changedAtMs: number }>();
  /** Syncs failed in a row. */
  #failures = 0;

  constructor(ctx: CoordinatorContext, port: FleetPort, hooks: SharedFleetHooks, everyMs = 1_000) {
    this.#ctx = ctx;
    this.#port = port;
    this.#hooks = hooks;
    this.#everyMs = everyMs;
  }

  /** Syncs once (bounded by one interval), then every `everyMs` in the background. */
  async start(): Promise<void> {
    await this.#bounded(this.sync());
    this.#loop = this.#syncLoop();
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#loop;
  }

  /** Publishes this coordinator's workers and reads the others'. Never rejects. */
  async sync(): Promise<void> {
    try {
      const ttl = Math.max(60_000, 4 * this.#lostAfterMs());
      await this.#port.publish(this.#snapshot(), ttl);
      const [snapshots, queues] = await Promise.all([this.#port.read(), this.#port.queues()]);
      this.#take(snapshots);
      for (const q of queues)
        if (!this.#queues.has(q)) {
          this.#queues.add(q);
          this.#hooks.addQueue(q);
        }
      await applyStateRequests(this.#ctx, this.#port, {
        heardAfter: (id, since) => this.heardAfter(id, since),
        setState: (id, state) => this.#hooks.setState(id, state),
      });
      if (this.#failures >= WARN_AFTER_FAILURES)
        this.#ctx.warn('the shared worker view is back (Redis answers again)');
      this.#failures = 0;
    } catch (e) {
      // said once, and only once it lasts: at start the connection is still being made
      if (++this.#failures === WARN_AFTER_FAILURES) {
        this.#ctx.warn(
          `the shared worker view cannot be synced through Redis (${(e as Error).message}): this coordinator sees only its own workers until it can`,
        );
        // The others' pending runs are as old as the view: no longer counted against its slots.
        if (this.#pending.length > 0) this.#ctx.capacity.changed();
        this.#pending = [];
      }
    }
    await forgetClaimedElsewhere(this.#ctx, this.#listedElsewhere()).catch((e: unknown) =>
      this.#ctx.warn(`checking dispatched runs claimed elsewhere: ${(e as Error).message}`),
    );
  }

  /**
   * Workers other coordinators heard more recently than this one did (or only they heard),
   * sorted by id.
   */
  others(): RemoteWorker[] {
    const out: RemoteWorker[] = [];
    for (const r of this.#remote.values()) {
      const local = this.#ctx.registry.get(r.id);
      if (local === undefined || local.lastHeartbeat.getTime() < r.lastHeartbeatMs) out.push(r);
    }
    return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /**
   * The selectors of runs other live coordinators put on a dispatch queue that no worker
   * claimed yet, as of the last sync: availability counts them against the free slots.
   */
  pendingElsewhere(): readonly Labels[] {
    return this.#pending;
  }

  /**
   * The other coordinator, still publishing, that heard `id` after `sinceMs`, if any. One that
   * stopped publishing (killed, or cut off from Redis) cannot be relied on to follow its runs.
   */
  heardAfter(id: string, sinceMs: number): RemoteWorker | undefined {
    const r = this.#remote.get(id);
    return r !== undefined && r.live && r.lastHeartbeatMs > sinceMs ? r : undefined;
  }

  /**
   * Hands an operator's cordon, drain or uncordon of a worker another live coordinator hears on
   * to that coordinator, which applies it at its next sync (or the worker's next coordinator, if
   * it moves meanwhile). The worker as it will be; undefined when no live coordinator hears it.
   * Rejects with 503 service_unavailable while Redis does not answer.
   */
  async handOn(id: string, state: WorkerState): Promise<RemoteWorker | undefined> {
    const r = this.#remote.get(id);
    if (r === undefined || !r.live) return undefined;
    const ttl = Math.max(this.#lostAfterMs(), 3 * this.#everyMs);
    const untilMs = this.#ctx.deps.clock.now().getTime() + ttl;
    try {
      await this.#port.requestState({ workerId: id, state, untilMs, token: randomUUID() }, ttl);
    } catch (e) {
      throw new AppError(
        ErrorCode.ServiceUnavailable,
        `worker ${JSON.stringify(id)} is connected to the coordinator at ${r.advertise}, and the request cannot reach it: Redis does not answer (${(e as Error).message}); retry once Redis is back, or ask that coordinator's API`,
      );
    }
    return { ...r, state };
  }

  /**
   * Removes a request handed on for `id` and not yet applied: an operator's newer change, made
   * here, wins over it. Never rejects (Redis away: the request may still apply; said once).
   */
  async supersede(id: string): Promise<void> {
    try {
      for (const req of await this.#port.requests())
        if (req.workerId === id) await this.#port.settle(req);
    } catch (e) {
      this.#ctx.warn(
        `worker ${JSON.stringify(id)}: an older cordon, drain or uncordon asked of another coordinator may still apply: Redis does not answer (${(e as Error).message})`,
      );
    }
  }

  #lostAfterMs(): number {
    return this.#ctx.deps.lostAfterMs ?? UNHEALTHY_MS;
  }

  #snapshot(): FleetSnapshot {
    const workers: FleetWorker[] = [];
    for (const w of this.#ctx.registry.all()) {
      if (w.assumed === true) continue; // never heard here: nothing to tell
      workers.push({
        id: w.id,
        labels: w.labels,
        capacity: w.capacity,
        busy: busySlots(this.#ctx, w.id),
        accepting: w.accepting,
        state: this.#ctx.registry.stateOf(w),
        lastHeartbeatMs: w.lastHeartbeat.getTime(),
        runningTasks: w.runningTasks,
        version: w.version,
        host: w.host,
        startedAt: w.startedAt,
        slotsBusy: w.slotsBusy,
      });
    }
    return {
      coordinatorId: this.id,
      advertise: this.#hooks.advertise(),
      publishedAtMs: this.#ctx.deps.clock.now().getTime(),
      workers,
      pending: this.#ctx.runs.pending().map((r) => r.selector),
    };
  }

  /** Keeps the freshest entry of each worker other coordinators publish; capacity may grow. */
  #take(snapshots: readonly FleetSnapshot[]): void {
    const next = new Map<string, RemoteWorker>();
    const pending: Labels[] = [];
    const now = this.#ctx.deps.clock.now().getTime();
    const forgetBefore = now - FORGET_AFTER_MS;
    for (const s of snapshots) {
      if (s.coordinatorId === this.id) continue;
      const live = this.#isLive(s, now);
      if (live) pending.push(...(s.pending ?? []));
      for (const w of s.workers) {
        if (w.lastHeartbeatMs < forgetBefore) continue;
        const seen = next.get(w.id);
        if (seen === undefined || seen.lastHeartbeatMs < w.lastHeartbeatMs)
          next.set(w.id, { ...w, coordinatorId: s.coordinatorId, advertise: s.advertise, live });
      }
    }
    for (const id of this.#published.keys())
      if (!snapshots.some((s) => s.coordinatorId === id)) this.#published.delete(id);
    const grew = [...next.values()].some((w) => {
      const before = this.#remote.get(w.id);
      return (
        before === undefined ||
        w.capacity - w.busy > before.capacity - before.busy ||
        (w.accepting && !before.accepting) ||
        (w.state === 'active' && before.state !== 'active')
      );
    });
    this.#remote = next;
    const fewer = fewerOfAny(this.#pending, pending);
    this.#pending = pending;
    if (grew || fewer) this.#ctx.capacity.changed();
  }

  /**
   * A coordinator is live while its snapshot keeps changing: its publish time is new within
   * three sync intervals of this clock (no comparison of the two hosts' clocks).
   */
  #isLive(s: FleetSnapshot, now: number): boolean {
    const seen = this.#published.get(s.coordinatorId);
    if (seen === undefined || seen.value !== s.publishedAtMs) {
      this.#published.set(s.coordinatorId, { value: s.publishedAtMs, changedAtMs: now });
      return true;
    }
    return now - seen.changedAtMs <= 3 * this.#everyMs;
  }

  /** Runs other coordinators' workers report executing (`runKey`s). */
  #listedElsewhere(): Set<string> {
    const keys = new Set<string>();
    for (const w of this.#remote.values())
      for (const t of w.runningTasks)
        keys.add(
          runKey(
            { name: t.dagName, dagRunId: t.dagRunId },
            { name: t.rootDagRunName, dagRunId: t.rootDagRunId },
          ),
        );
    return keys;
  }

  async #bounded(p: Promise<void>): Promise<void> {
    const done = new AbortController();
    const late = this.#ctx.deps.clock.sleep(this.#everyMs, done.signal).catch(() => undefined);
    await Promise.race([p, late]);
    done.abort();
  }

  async #syncLoop(): Promise<void> {
    const signal = this.#stop.signal;
    while (!signal.aborted) {
      try {
        await this.#ctx.deps.clock.sleep(this.#everyMs, signal);
      } catch {
        return;
      }
      // A sync stuck on a Redis that stopped answering must not hold up stop(); the listener
      // goes with each sync (one left per second would pile up on the signal for ever).
      let onAbort: (() => void) | undefined;
      await Promise.race([
        this.sync(),
        new Promise<void>((r) =>
          signal.addEventListener('abort', (onAbort = () => r()), { once: true }),
        ),
      ]);
      if (onAbort) signal.removeEventListener('abort', onAbort);
    }
  }
}
