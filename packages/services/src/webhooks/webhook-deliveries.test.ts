import { describe, expect, it } from 'vitest';
import { FakeClock, flushMicrotasks } from '@trellis/testkit';
import { InMemoryRunEvents } from '../events/in-memory-run-events.js';
import { WebhookDeliveries, type WebhookDeliveriesDeps } from './webhook-deliveries.js';
import type { WebhookDelivery, WebhookJournal, WebhookTransport } from './webhook-port.js';

const HOUR = 3_600_000;

/** The journal in a map (the file journal has its own tests). */
const memoryJournal = (): WebhookJournal & { readonly files: Map<string, WebhookDelivery> } => {
  const files = new Map<string, WebhookDelivery>();
  return {
    files,
    loadAll: () => Promise.resolve([...files.values()]),
    save: (d) => {
      files.set(d.id, d);
      return Promise.resolve();
    },
    remove: (id) => {
      files.delete(id);
      return Promise.resolve();
    },
  };
};

/** A transport whose answers the test gives: each post waits until answered. */
const heldTransport = () => {
  const held: ((status: number) => void)[] = [];
  let inFlight = 0;
  let most = 0;
  const transport: WebhookTransport = {
    post: ({ signal }) =>
      new Promise((resolve, reject) => {
        inFlight++;
        most = Math.max(most, inFlight);
        const answer = (status: number): void => {
          inFlight--;
          resolve({ status, bodyStart: '' });
        };
        held.push(answer);
        // as fetch does: a stop cuts the request short
        signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
      }),
  };
  return { transport, held, inFlight: () => inFlight, most: () => most };
};

const setUp = (over: Partial<WebhookDeliveriesDeps> & Pick<WebhookDeliveriesDeps, 'transport'>) => {
  const clock = (over.clock as FakeClock | undefined) ?? new FakeClock();
  const events = new InMemoryRunEvents({ clock });
  const warnings: string[] = [];
  let n = 0;
  const journal = memoryJournal();
  const hooks = new WebhookDeliveries({
    subscriptions: [
      {
        name: 'ci',
        url: 'http://x/',
        secret: 's',
        events: ['run:finished'],
        dags: [],
        maxConcurrency: 2,
      },
    ],
    journal,
    events,
    clock,
    policy: { baseDelayMs: 1000, maxDelayMs: HOUR, retryForMs: 24 * HOUR },
    timeoutMs: 1000,
    maxJournalEntries: 100,
    ids: () => `00000000-0000-0000-0000-${String(++n).padStart(12, '0')}`,
    warn: (m) => warnings.push(m),
    random: () => 0.5,
    ...over,
  });
  const finish = (dagRunId: string) =>
    events.publish({ type: 'run:finished', dag: 'd', dagRunId, data: {} });
  return { hooks, clock, journal, warnings, finish };
};

describe('WebhookDeliveries', () => {
  it('sends at most maxConcurrency requests to a subscription at once', async () => {
    const t = heldTransport();
    const { hooks, finish } = setUp({ transport: t.transport });
    await hooks.start();
    for (const id of ['a', 'b', 'c', 'd', 'e']) finish(id);
    await flushMicrotasks();
    expect(t.inFlight()).toBe(2);
    t.held.shift()?.(200);
    await flushMicrotasks();
    expect(t.inFlight()).toBe(2); // the third took the freed slot
    while (t.held.length > 0) {
      t.held.shift()?.(200);
      await flushMicrotasks();
    }
    expect(t.most()).toBe(2);
    expect(hooks.list({ limit: 10 }).map((d) => d.state)).toEqual(Array(5).fill('delivered'));
    await hooks.stop();
  });

  it('keeps the journal under its cap: finished deliveries go first, then the oldest pending, said in a line', async () => {
    const t = heldTransport();
    const { hooks, finish, journal, warnings } = setUp({
      transport: t.transport,
      maxJournalEntries: 3,
    });
    await hooks.start();
    finish('r1');
    await flushMicrotasks();
    t.held.shift()?.(200); // r1 delivered
    await flushMicrotasks();
    finish('r2');
    finish('r3');
    finish('r4'); // full: r1, finished, goes silently
    await flushMicrotasks();
    expect(hooks.list({ limit: 10 }).map((d) => d.dagRunId)).toEqual(['r4', 'r3', 'r2']);
    expect(warnings).toEqual([]);
    finish('r5'); // all pending: the oldest, r2, is dropped with a warning
    await flushMicrotasks();
    expect(hooks.list({ limit: 10 }).map((d) => d.dagRunId)).toEqual(['r5', 'r4', 'r3']);
    expect(journal.files.size).toBe(3);
    expect(warnings).toEqual([
      expect.stringMatching(
        /^webhook journal full \(3 deliveries, all pending\): dropped delivery \S+ \(run:finished of run r2\) to "ci"; raise webhooks.maxJournalEntries/,
      ),
    ]);
    await hooks.stop();
  });

  it('retries a refusing receiver for 24 h after the event, then fails the delivery with a line', async () => {
    const clock = new FakeClock('2026-01-02T00:00:00.000Z', { autoAdvance: true });
    let posts = 0;
    const transport: WebhookTransport = {
      post: () => {
        posts++;
        return Promise.resolve({ status: 503, bodyStart: 'down' });
      },
    };
    let failed: (d: WebhookDelivery) => void = () => undefined;
    const failure = new Promise<WebhookDelivery>((r) => (failed = r));
    const { hooks, finish, warnings } = setUp({
      transport,
      clock,
      onSaved: (d) => d.state === 'failed' && failed(d),
    });
    await hooks.start();
    finish('r1');
    const d = await failure;
    await hooks.stop();
    expect(d.state).toBe('failed');
    expect(d.attempts.at(-1)?.atMs).toBeLessThanOrEqual(d.createdAtMs + 24 * HOUR);
    expect(posts).toBe(35);
    expect(clock.now().toISOString() > '2026-01-02T23:00:00.000Z').toBe(true);
    expect(warnings).toEqual([expect.stringMatching(/failed after 35 attempts: HTTP 503: down$/)]);
  });

  it('resumes pending deliveries from the journal at start, and fails those of a removed subscription', async () => {
    const t = heldTransport();
    const { hooks, journal, warnings } = setUp({ transport: t.transport });
    const base = { eventType: 'run:finished', body: '{}', createdAtMs: 0, attempts: [] };
    await journal.save({
      ...base,
      id: 'p1',
      subscription: 'ci',
      state: 'pending',
      nextAttemptAtMs: 0,
    });
    await journal.save({
      ...base,
      id: 'p2',
      subscription: 'gone',
      state: 'pending',
      nextAttemptAtMs: 0,
    });
    await hooks.start();
    await flushMicrotasks();
    expect(t.inFlight()).toBe(1);
    t.held.shift()?.(200);
    await flushMicrotasks();
    expect(journal.files.get('p1')?.state).toBe('delivered');
    expect(journal.files.get('p2')?.state).toBe('failed');
    expect(warnings).toEqual([
      'webhook delivery p2 (run:finished) failed: subscription "gone" is no longer configured',
    ]);
    await hooks.stop();
  });
});
