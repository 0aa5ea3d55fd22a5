import type { Redis } from 'ioredis';
import type { Clock } from '@trellis/core';
import type { FleetPort, FleetSnapshot, StateRequest } from '@trellis/coordinator';
import { DEFAULT_PREFIX, queuesKey } from './job-data.js';

/** Sorted set of coordinator ids, each scored with when its snapshot lapses (ms). */
const indexKey = (prefix: string): string => `${prefix}:fleet:coordinators`;
/** One coordinator's snapshot (JSON), expiring on its own. */
const snapshotKey = (prefix: string, id: string): string => `${prefix}:fleet:c:${id}`;
/** Hash of the state requests waiting for a worker's coordinator: worker id → JSON request. */
const requestsKey = (prefix: string): string => `${prefix}:fleet:requests`;
/** Removes a request unless a newer one for the same worker replaced it. */
const SETTLE = `local v = redis.call('HGET', KEYS[1], ARGV[1])
if v and cjson.decode(v).token == ARGV[2] then
  return redis.call('HDEL', KEYS[1], ARGV[1])
end
return 0`;

/**
 * The shared worker view of coordinators on one Redis (docs/ha.md, "Workers across
 * coordinators"): each coordinator's snapshot is one key with an expiry, listed in a sorted set
 * by expiry so a lapsed coordinator drops out of the listing. A read is two commands whatever
 * the number of coordinators. While the connection is not ready, calls reject at once instead of
 * waiting in ioredis's offline queue (the dispatcher's connection retries for ever).
 */
export class RedisFleet implements FleetPort {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #clock: Clock;

  /** `clock`: every coordinator's is read against the others' (keep hosts in NTP sync). */
  constructor(redis: Redis, clock: Clock, prefix: string = DEFAULT_PREFIX) {
    this.#redis = redis;
    this.#clock = clock;
    this.#prefix = prefix;
  }

  async publish(snapshot: FleetSnapshot, ttlMs: number): Promise<void> {
    this.#ready();
    const until = this.#clock.now().getTime() + ttlMs;
    const replies = await this.#redis
      .multi()
      .set(snapshotKey(this.#prefix, snapshot.coordinatorId), JSON.stringify(snapshot), 'PX', ttlMs)
      .zadd(indexKey(this.#prefix), until, snapshot.coordinatorId)
      .exec();
    const failed = replies?.find(([e]) => e !== null)?.[0];
    if (failed) throw failed;
  }

  async read(): Promise<readonly FleetSnapshot[]> {
    this.#ready();
    const index = indexKey(this.#prefix);
    await this.#redis.zremrangebyscore(index, '-inf', String(this.#clock.now().getTime()));
    const ids = await this.#redis.zrange(index, '0', '-1');
    if (ids.length === 0) return [];
    const texts = await this.#redis.mget(...ids.map((id) => snapshotKey(this.#prefix, id)));
    const out: FleetSnapshot[] = [];
    for (const t of texts) {
      if (t === null) continue; // lapsed between the two commands
      try {
        out.push(JSON.parse(t) as FleetSnapshot);
      } catch {
        // written by something else under our prefix: not a coordinator's snapshot
      }
    }
    return out;
  }

  async queues(): Promise<readonly string[]> {
    this.#ready();
    return this.#redis.smembers(queuesKey(this.#prefix));
  }

  /** Each request carries its own expiry; the hash as a whole lapses after the last one's. */
  async requestState(req: StateRequest, ttlMs: number): Promise<void> {
    this.#ready();
    const key = requestsKey(this.#prefix);
    const replies = await this.#redis
      .multi()
      .hset(key, req.workerId, JSON.stringify(req))
      .pexpire(key, ttlMs)
      .exec();
    const failed = replies?.find(([e]) => e !== null)?.[0];
    if (failed) throw failed;
  }

  async requests(): Promise<readonly StateRequest[]> {
    this.#ready();
    const all = await this.#redis.hgetall(requestsKey(this.#prefix));
    const out: StateRequest[] = [];
    for (const text of Object.values(all)) {
      try {
        out.push(JSON.parse(text) as StateRequest);
      } catch {
        // written by something else under our prefix: not a request
      }
    }
    return out;
  }

  async settle(req: StateRequest): Promise<void> {
    this.#ready();
    await this.#redis.eval(SETTLE, 1, requestsKey(this.#prefix), req.workerId, req.token);
  }

  #ready(): void {
    const s = this.#redis.status;
    if (s !== 'ready') throw new Error(`the Redis connection is ${s}`);
  }
}
