import { Redis } from 'ioredis';

/**
 * One ioredis connection for BullMQ: `maxRetriesPerRequest: null` (BullMQ refuses blocking
 * connections without it) and reconnection with a capped back-off, so Redis restarting is a pause,
 * not a crash.
 */
export const createRedis = (url: string): Redis =>
  new Redis(url, {
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    retryStrategy: (times) => Math.min(100 * 2 ** Math.min(times, 5), 2_000),
  });
