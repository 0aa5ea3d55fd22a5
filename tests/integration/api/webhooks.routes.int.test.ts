import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { runRoutes, webhookRoutes } from '@trellis/api';
import { WebhookDeliveriesResponse } from '@trellis/contract';
import { systemClock } from '@trellis/core';
import { WebhookDeliveries, fetchWebhookTransport, type WebhookDelivery } from '@trellis/services';
import { FsWebhookJournal } from '@trellis/store';
import { apiHarness, type ApiHarness } from '../support/api-harness.js';
import { expectError } from '../support/expect-error.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

/** GET /webhooks/deliveries over real runs and a real receiver (docs/api.md, "Webhooks"). */
let h: ApiHarness | undefined;
let hooks: WebhookDeliveries | undefined;
let receiver: WebhookReceiver | undefined;
afterEach(async () => {
  await hooks?.stop();
  await receiver?.close();
  h?.cleanup();
});

/** The harness with deliveries of `run:finished` of DAG `ok` and `bad` to the receiver. */
const setUp = async (saved: (d: WebhookDelivery) => void) => {
  receiver = await startWebhookReceiver(() => 204);
  const url = receiver.url;
  h = apiHarness([runRoutes, webhookRoutes], {
    webhooks: (events, home) => {
      hooks = new WebhookDeliveries({
        subscriptions: [
          {
            name: 'ci',
            url,
            secret: 'a-secret-of-16-chars',
            events: ['run:finished'],
            dags: ['ok', 'bad'],
            maxConcurrency: 1,
          },
        ],
        journal: new FsWebhookJournal({ dir: join(home, 'data', 'webhooks'), warn: () => {} }),
        transport: fetchWebhookTransport,
        events,
        clock: systemClock,
        policy: { baseDelayMs: 10, maxDelayMs: 100, retryForMs: 60_000 },
        timeoutMs: 5000,
        maxJournalEntries: 100,
        ids: randomUUID,
        warn: () => {},
        onSaved: saved,
      });
      return hooks;
    },
  });
  await hooks?.start();
  h.dag('ok', 'steps:\n  - name: a\n    command: "true"\n');
  h.dag('bad', 'steps:\n  - name: a\n    command: exit 3\n');
  h.dag('other', 'steps:\n  - name: a\n    command: "true"\n');
  return h;
};

const api = () => request((h as ApiHarness).app);

describe('GET /webhooks/deliveries', () => {
  it('lists each delivered run:finished event with its attempts, newest first, and filters', async () => {
    let resolve: () => void = () => undefined;
    const twoDelivered = new Promise<void>((r) => (resolve = r));
    const delivered = new Set<string>();
    const harness = await setUp((d) => {
      if (d.state === 'delivered') delivered.add(d.id);
      if (delivered.size === 2) resolve();
    });
    for (const [file, id] of [
      ['ok', 'r-ok'],
      ['other', 'r-other'],
      ['bad', 'r-bad'],
    ] as const) {
      await api().post(`/api/v2/dags/${file}/start`).send({ dagRunId: id }).expect(200);
      await harness.finished(file, id);
    }
    await twoDelivered;
    const res = await api().get('/api/v2/webhooks/deliveries').expect(200);
    const { deliveries } = WebhookDeliveriesResponse.parse(res.body);
    expect(deliveries.map((d) => [d.dagRunId, d.state, d.eventType])).toEqual([
      ['r-bad', 'delivered', 'run:finished'],
      ['r-ok', 'delivered', 'run:finished'],
    ]);
    expect(deliveries[0]?.event).toMatchObject({
      id: deliveries[0]?.id,
      dag: 'bad',
      data: { status: 2, statusLabel: 'failed' },
    });
    expect(deliveries[0]?.attempts).toEqual([
      { at: expect.any(String), durationMs: expect.any(Number), status: 204 },
    ]);
    const one = await api().get('/api/v2/webhooks/deliveries?dagRunId=r-ok&limit=5').expect(200);
    expect(one.body.deliveries).toHaveLength(1);
    const none = await api().get('/api/v2/webhooks/deliveries?state=failed&subscription=ci');
    expect(none.body).toEqual({ deliveries: [] });
  });

  it('names a bad filter and what to write instead', async () => {
    await setUp(() => undefined);
    expectError(
      await api().get('/api/v2/webhooks/deliveries?subscription=nope'),
      400,
      'bad_request',
      /subscription: "nope" is not configured: use one of ci/,
    );
    expectError(
      await api().get('/api/v2/webhooks/deliveries?state=done'),
      400,
      'bad_request',
      /state/,
    );
    expectError(
      await api().get('/api/v2/webhooks/deliveries?limit=0'),
      400,
      'bad_request',
      /limit.*1 to 1000/,
    );
  });

  it('answers 503 where no deliveries run', async () => {
    h = apiHarness([webhookRoutes]);
    expectError(
      await api().get('/api/v2/webhooks/deliveries'),
      503,
      'service_unavailable',
      /not delivered by this process/,
    );
  });
});
