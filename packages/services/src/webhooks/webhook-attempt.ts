import { nextAttemptAtMs, type WebhookRetryPolicy } from './webhook-backoff.js';
import type {
  WebhookAttempt,
  WebhookDelivery,
  WebhookSubscription,
  WebhookTransport,
} from './webhook-port.js';
import { WebhookHeader, signWebhook } from './webhook-signing.js';

/** What one attempt needs besides the delivery. */
export interface AttemptDeps {
  readonly transport: WebhookTransport;
  readonly policy: WebhookRetryPolicy;
  readonly timeoutMs: number;
  readonly nowMs: () => number;
  readonly random: () => number;
}

/**
 * Sends `d` once, signed for now, and answers the delivery after it: delivered on a 2xx answer,
 * else pending with its next attempt's time, or failed once the retry window is over. Rejects
 * only when `signal` aborted the attempt (the delivery stays as it was: sent again later).
 */
export const attemptDelivery = async (
  d: WebhookDelivery,
  sub: WebhookSubscription,
  deps: AttemptDeps,
  signal: AbortSignal,
): Promise<WebhookDelivery> => {
  const atMs = deps.nowMs();
  const timestamp = Math.floor(atMs / 1000);
  const headers = {
    [WebhookHeader.EventId]: d.id,
    [WebhookHeader.EventType]: d.eventType,
    [WebhookHeader.Timestamp]: String(timestamp),
    [WebhookHeader.Signature]: signWebhook(sub.secret, timestamp, d.body),
    [WebhookHeader.Attempt]: String(d.attempts.length + 1),
  };
  let attempt: WebhookAttempt;
  try {
    const res = await deps.transport.post({
      url: sub.url,
      headers,
      body: d.body,
      timeoutMs: deps.timeoutMs,
      signal,
    });
    const durationMs = deps.nowMs() - atMs;
    attempt =
      res.status >= 200 && res.status < 300
        ? { atMs, durationMs, status: res.status }
        : { atMs, durationMs, status: res.status, error: refusal(res.status, res.bodyStart) };
  } catch (e) {
    if (signal.aborted) throw e;
    attempt = { atMs, durationMs: deps.nowMs() - atMs, error: errorText(e, deps.timeoutMs) };
  }
  const attempts = [...d.attempts, attempt];
  const endMs = atMs + attempt.durationMs;
  const { nextAttemptAtMs: _, ...rest } = d;
  if (attempt.error === undefined) return { ...rest, attempts, state: 'delivered' };
  const next = nextAttemptAtMs(attempts.length, d.createdAtMs, endMs, deps.policy, deps.random());
  return next === undefined
    ? { ...rest, attempts, state: 'failed' }
    : { ...rest, attempts, state: 'pending', nextAttemptAtMs: next };
};

const refusal = (status: number, bodyStart: string): string =>
  `HTTP ${status}${bodyStart.trim() === '' ? '' : `: ${bodyStart.trim()}`}`;

/** A failed request in words (fetch hides the cause: connection refused, DNS, reset). */
const errorText = (e: unknown, timeoutMs: number): string => {
  const err = e as Error & { cause?: { code?: string; message?: string } };
  if (err.name === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
  const cause = err.cause?.code ?? err.cause?.message;
  return cause ? `${err.message}: ${cause}` : err.message;
};
