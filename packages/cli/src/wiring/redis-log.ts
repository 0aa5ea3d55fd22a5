import type { EventEmitter } from 'node:events';

/*
 * Redis going away is an expected outage: the connection retries with back-off on its own.
 * Instead of silence (or a stack trace per retry), the log gets one line when Redis becomes
 * unreachable and one when it is back, with the address but never the password.
 */

/** `host:port` of a redis:// or rediss:// URL, without credentials. */
const addressOf = (url: string): string => {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return 'redis';
  }
};

/** Reports the outages of one ioredis connection to `log` (warnings say "warning:"). */
export const logRedisOutages = (
  redis: EventEmitter,
  url: string,
  log: (line: string) => void,
): void => {
  const at = addressOf(url);
  let downSince: number | undefined;
  let everReady = false;
  redis.on('error', (e: unknown) => {
    if (downSince !== undefined) return; // the same outage: retried quietly
    downSince = Date.now();
    const why = e instanceof Error ? e.message : String(e);
    log(`warning: redis ${at} is unreachable (${why}): retrying with back-off`);
  });
  redis.on('ready', () => {
    if (downSince !== undefined) {
      const secs = ((Date.now() - downSince) / 1000).toFixed(1);
      log(`redis ${at} is reachable ${everReady ? 'again ' : ''}after ${secs}s`);
    }
    downSince = undefined;
    everReady = true;
  });
};
