import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '@trellis/core';
import {
  InMemoryRunEvents,
  WebhookDeliveries,
  WebhookHeader,
  fetchWebhookTransport,
  verifyWebhookSignature,
  type WebhookDelivery,
} from '@trellis/services';
import { FsWebhookJournal } from '@trellis/store';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const SECRET = 'test-secret';
let dir = '';
let receiver: WebhookReceiver | undefined;
const services: WebhookDeliveries[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.stop();
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A delivery service on `dir` posting to the receiver, with `saved` called after each save. */
const deliveries = (
  events: InMemoryRunEvents,
  saved: (d: WebhookDelivery) => void = () => undefined,
  warnings: string[] = [],
): WebhookDeliveries => {
  const s = new WebhookDeliveries({
    subscriptions: [
      {
        name: 'ci',
        url: receiver?.url ?? '',
        secret: SECRET,
        events: ['run:finished'],
        dags: [],
        maxConcurrency: 2,
      },
    ],
    journal: new FsWebhookJournal({ dir, warn: (m) => warnings.push(m) }),
    transport: fetchWebhookTransport,
    events,
    clock: systemClock,
    policy: { baseDelayMs: 60, maxDelayMs: 10_000, retryForMs: 24 * 3_600_000 },
    timeoutMs: 5000,
    maxJournalEntries: 100,
    ids: randomUUID,
    warn: (m) => warnings.push(m),
    random: () => 0.5,
    onSaved: saved,
  });
  services.push(s);
  return s;
};

/** Resolves with the first saved delivery that `pred` accepts. */
const savedWhen = (pred: (d: WebhookDelivery) => boolean) => {
  let resolve: (d: WebhookDelivery) => void = () => undefined;
  const seen = new Promise<WebhookDelivery>((r) => (resolve = r));
  return { seen, saved: (d: WebhookDelivery) => pred(d) && resolve(d) };
};

const finished = (events: InMemoryRunEvents, dagRunId: string) =>
  events.publish({
    type: 'run:finished',
    dag: 'build',
    dagRunId,
    data: { status: 4, statusLabel: 'finished' },
  });

const signatureOk = (h: { headers: Record<string, unknown>; body: string }): boolean =>
  verifyWebhookSignature(
    SECRET,
    Number(h.headers[WebhookHeader.Timestamp]),
    h.body,
    String(h.headers[WebhookHeader.Signature]),
  );

describe('webhook deliveries to a real HTTP receiver', () => {
  it('retries 500s with growing delays, signed, until a 200; same event id each time', async () => {
    dir = mkdtempSync(join(tmpdir(), 'trellis-hooks-'));
    receiver = await startWebhookReceiver((n) => (n < 3 ? 500 : 200));
    const events = new InMemoryRunEvents({ clock: systemClock });
    const done = savedWhen((d) => d.state === 'delivered');
    const scheduled: number[] = [];
    const saved = (d: WebhookDelivery): void => {
      const last = d.attempts.at(-1);
      if (d.state === 'pending' && last && d.nextAttemptAtMs !== undefined)
        scheduled.push(d.nextAttemptAtMs - (last.atMs + last.durationMs));
      done.saved(d);
    };
    await deliveries(events, saved).start();
    finished(events, 'run-1');
    events.publish({ type: 'step:finished', dag: 'build', dagRunId: 'run-1', data: {} }); // not subscribed
    const delivered = await done.seen;
    const got = receiver.received;
    expect(got).toHaveLength(4);
    expect(got.every(signatureOk)).toBe(true);
    expect(new Set(got.map((h) => h.headers[WebhookHeader.EventId])).size).toBe(1);
    expect(got.map((h) => h.headers[WebhookHeader.Attempt])).toEqual(['1', '2', '3', '4']);
    const gaps = got.slice(1).map((h, i) => h.atMs - (got[i]?.atMs ?? 0));
    // each retry was scheduled twice as far out as the one before, and waited at least that long
    // (a timer may fire up to a millisecond early by its rounding)
    expect(scheduled).toEqual([60, 120, 240]);
    scheduled.forEach((delay, i) => expect(gaps[i]).toBeGreaterThanOrEqual(delay - 1));
    const body = JSON.parse(got[0]?.body ?? '{}') as Record<string, unknown>;
    expect(body).toMatchObject({
      id: delivered.id,
      type: 'run:finished',
      subscription: 'ci',
      dag: 'build',
      dagRunId: 'run-1',
      data: { status: 4, statusLabel: 'finished' },
    });
    expect(got[0]?.headers['content-type']).toBe('application/json');
    expect(delivered.attempts.map((a) => a.status)).toEqual([500, 500, 500, 200]);
    expect(delivered.attempts[0]?.error).toBe('HTTP 500: not now');
  });

  it('a restart mid-retry delivers from the journal; the duplicate has the same event id', async () => {
    dir = mkdtempSync(join(tmpdir(), 'trellis-hooks-'));
    // 1st: 500 (journaled as failed attempt), 2nd: no answer until the stop cuts it, 3rd: 200
    receiver = await startWebhookReceiver((n) => (n === 0 ? 500 : n === 1 ? 'hang' : 200));
    const first = new InMemoryRunEvents({ clock: systemClock });
    const retried = savedWhen((d) => d.attempts.length === 1);
    const a = deliveries(first, retried.saved);
    await a.start();
    finished(first, 'run-2');
    const pending = await retried.seen;
    expect(pending.state).toBe('pending');
    await receiver.untilReceived(2); // the second attempt reached the receiver, unanswered
    await a.stop(); // the process goes away mid-attempt
    expect(readdirSync(dir)).toEqual([`${pending.id}.json`]);

    const done = savedWhen((d) => d.state === 'delivered');
    const b = deliveries(new InMemoryRunEvents({ clock: systemClock }), done.saved);
    await b.start();
    const delivered = await done.seen;
    const got = receiver.received;
    expect(got).toHaveLength(3);
    expect(got.map((h) => h.headers[WebhookHeader.EventId])).toEqual([
      pending.id,
      pending.id,
      pending.id,
    ]);
    expect(got[2]?.body).toBe(got[0]?.body);
    expect(got.every(signatureOk)).toBe(true);
    expect(delivered.attempts.map((x) => x.status)).toEqual([500, 200]);
    expect(b.list({ limit: 10 }).map((d) => [d.id, d.state])).toEqual([[pending.id, 'delivered']]);
  });
});
