import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Webhook signatures (docs/api.md, "Webhooks"): HMAC-SHA256 with the subscription's secret over
 * `<timestamp>.<body>`, the timestamp in Unix seconds as sent in its own header, so a receiver
 * can refuse a replayed request by its age and a forged one by its signature.
 */

/** The headers of a delivery (lower case: HTTP header names are case-insensitive). */
export const WebhookHeader = {
  /** The delivery's event id: the same on every retry, for de-duplication. */
  EventId: 'trellis-event-id',
  /** The event type, e.g. `run:finished`. */
  EventType: 'trellis-event-type',
  /** Unix seconds when this attempt was signed. */
  Timestamp: 'trellis-timestamp',
  /** `sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">`. */
  Signature: 'trellis-signature',
  /** 1 for the first attempt, 2 for the first retry, ... */
  Attempt: 'trellis-delivery-attempt',
} as const;

/** `sha256=<hex>`: the signature of `body` sent at `timestamp` (Unix seconds). */
export const signWebhook = (secret: string, timestamp: number, body: string): string =>
  `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;

/** True when `signature` is `body`'s at `timestamp` under `secret` (compared in constant time). */
export const verifyWebhookSignature = (
  secret: string,
  timestamp: number,
  body: string,
  signature: string,
): boolean => {
  const want = Buffer.from(signWebhook(secret, timestamp, body));
  const got = Buffer.from(signature);
  return want.length === got.length && timingSafeEqual(want, got);
};
