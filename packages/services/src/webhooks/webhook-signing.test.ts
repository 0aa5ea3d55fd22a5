import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signWebhook, verifyWebhookSignature } from './webhook-signing.js';

describe('webhook signatures', () => {
  it('is the HMAC-SHA256 of "<timestamp>.<body>" in hex, prefixed sha256=', () => {
    const body = '{"type":"run:finished"}';
    const hex = createHmac('sha256', 's3cret').update(`1700000000.${body}`).digest('hex');
    expect(signWebhook('s3cret', 1_700_000_000, body)).toBe(`sha256=${hex}`);
  });

  it('verifies only the same secret, timestamp and body', () => {
    const sig = signWebhook('k', 10, 'body');
    expect(verifyWebhookSignature('k', 10, 'body', sig)).toBe(true);
    expect(verifyWebhookSignature('other', 10, 'body', sig)).toBe(false);
    expect(verifyWebhookSignature('k', 11, 'body', sig)).toBe(false);
    expect(verifyWebhookSignature('k', 10, 'body ', sig)).toBe(false);
    expect(verifyWebhookSignature('k', 10, 'body', 'sha256=00')).toBe(false);
  });
});
