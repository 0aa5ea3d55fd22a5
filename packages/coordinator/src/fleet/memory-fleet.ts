import type { FleetPort, FleetSnapshot, StateRequest } from './fleet-port.js';

/**
 * A {@link FleetPort} in memory, shared by the coordinators of one test; `down` makes every call
 * reject as an unreachable Redis does.
 */
export class MemoryFleet implements FleetPort {
  readonly #snapshots = new Map<string, { snapshot: FleetSnapshot; until: number }>();
  readonly #queues = new Set<string>();
  readonly #requests = new Map<string, StateRequest>();
  down = false;
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  addQueue(name: string): void {
    this.#queues.add(name);
  }

  publish(snapshot: FleetSnapshot, ttlMs: number): Promise<void> {
    if (this.down) return Promise.reject(new Error('Redis is not reachable'));
    this.#snapshots.set(snapshot.coordinatorId, {
      snapshot: structuredClone(snapshot),
      until: this.#now() + ttlMs,
    });
    return Promise.resolve();
  }

  read(): Promise<readonly FleetSnapshot[]> {
    if (this.down) return Promise.reject(new Error('Redis is not reachable'));
    const now = this.#now();
    return Promise.resolve(
      [...this.#snapshots.values()].filter((s) => s.until > now).map((s) => s.snapshot),
    );
  }

  queues(): Promise<readonly string[]> {
    if (this.down) return Promise.reject(new Error('Redis is not reachable'));
    return Promise.resolve([...this.#queues]);
  }

  requestState(req: StateRequest): Promise<void> {
    if (this.down) return Promise.reject(new Error('Redis is not reachable'));
    this.#requests.set(req.workerId, { ...req });
    return Promise.resolve();
  }

  requests(): Promise<readonly StateRequest[]> {
    if (this.down) return Promise.reject(new Error('Redis is not reachable'));
    return Promise.resolve([...this.#requests.values()].map((r) => ({ ...r })));
  }

  settle(req: StateRequest): Promise<void> {
    if (this.down) return Promise.reject(new Error('Redis is not reachable'));
    if (this.#requests.get(req.workerId)?.token === req.token) this.#requests.delete(req.workerId);
    return Promise.resolve();
  }
}
