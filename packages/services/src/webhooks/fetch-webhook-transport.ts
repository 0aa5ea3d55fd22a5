import type { WebhookTransport } from './webhook-port.js';

/** Characters of a refusal's body kept in the delivery log. */
const BODY_START = 200;

/** Sends deliveries with Node's fetch; a request gives up after `timeoutMs`. */
export const fetchWebhookTransport: WebhookTransport = {
  async post({ url, headers, body, timeoutMs, signal }) {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
      redirect: 'manual', // a redirect is a refusal to show, not something to follow blindly
      signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
    });
    const text = await res.text().catch(() => '');
    return { status: res.status, bodyStart: text.slice(0, BODY_START) };
  },
};
