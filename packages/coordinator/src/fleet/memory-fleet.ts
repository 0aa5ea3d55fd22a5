import type { FleetPort, FleetSnapshot } from './fleet-port.js';

/**
 * A {@link FleetPort} in memory, shared by the coordinators of one test; `down` makes every call
 * reject as an unreachable Redis does.
 */
export class MemoryFleet implements FleetPort {
  readonly #snapshots = new Map<string, { snapshot: FleetSnapshot; until: number }>();
  readonly #queues = new Set<string>();
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
}
