/**
 * The wait before attempt `n` (spec, Step fields: "The interval before attempt n is
 * `interval * (backoff ^ attemptCount)`, capped by `maxIntervalSec`").
 *
 * `attemptCount` is the number of attempts already waited for: 0 before the first retry, so the
 * first retry waits `intervalSec` and each later one `backoff` times longer. A backoff of 1 means
 * a fixed interval; `maxIntervalSec` 0 means no cap. Returns milliseconds.
 */
export const backoffDelayMs = (
  intervalSec: number,
  backoff: number,
  attemptCount: number,
  maxIntervalSec: number,
): number => {
  if (intervalSec <= 0) return 0;
  const sec = intervalSec * Math.pow(backoff > 1 ? backoff : 1, Math.max(0, attemptCount));
  const capped = maxIntervalSec > 0 ? Math.min(sec, maxIntervalSec) : sec;
  return Math.round(capped * 1000);
};
