/** How deliveries are retried (config `webhooks`, docs/configuration.md). */
export interface WebhookRetryPolicy {
  /** Delay before the first retry, in ms; each later one doubles it. */
  readonly baseDelayMs: number;
  /** No delay grows beyond this, in ms. */
  readonly maxDelayMs: number;
  /** A delivery is retried until this long after its event, in ms; then it is failed. */
  readonly retryForMs: number;
}

/**
 * The delay before attempt `attempt + 1` after `attempt` failed attempts (1, 2, ...): exponential,
 * `baseDelayMs * 2^(attempt-1)` capped at `maxDelayMs`, spread by up to ±10% (`random` in [0, 1))
 * so receivers coming back from an outage are not hit by every delivery in the same instant.
 */
export const retryDelayMs = (
  attempt: number,
  policy: Pick<WebhookRetryPolicy, 'baseDelayMs' | 'maxDelayMs'>,
  random = 0.5,
): number => {
  const exp = Math.min(attempt - 1, 52); // 2^52 ms is beyond any cap; avoids Infinity
  const raw = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, exp));
  return Math.round(raw * (0.9 + 0.2 * random));
};

/**
 * When the attempt after `attempt` failed attempts is due, or undefined when the delivery has
 * been retried long enough (the next attempt would come more than `retryForMs` after the event).
 */
export const nextAttemptAtMs = (
  attempt: number,
  createdAtMs: number,
  nowMs: number,
  policy: WebhookRetryPolicy,
  random = 0.5,
): number | undefined => {
  const at = nowMs + retryDelayMs(attempt, policy, random);
  return at - createdAtMs > policy.retryForMs ? undefined : at;
};
