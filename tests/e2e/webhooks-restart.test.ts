import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WebhookHeader, verifyWebhookSignature } from '@trellis/services';
import {
  startWebhookReceiver,
  type WebhookReceiver,
} from '../integration/support/webhook-receiver.js';
import { callApi, startAll, type StartAll } from './support/start-all.js';

/**
 * Webhooks through the real server: config.yaml's subscription gets a run's `run:finished`,
 * signed; the receiver refuses until the server was restarted, and the restarted server delivers
 * the journaled event with the same id. The delivery log shows it.
 */
const SECRET = 'e2e-webhook-secret-0123';
let home = '';
let server: StartAll | undefined;
let receiver: WebhookReceiver | undefined;
afterAll(async () => {
  await server?.stop();
  await receiver?.close();
  rmSync(home, { recursive: true, force: true });
});

describe('webhooks of trellis start-all', () => {
  it('delivers a run:finished after a restart mid-retry, with the same event id', async () => {
    let refuse = true;
    receiver = await startWebhookReceiver(() => (refuse ? 500 : 200));
    home = mkdtempSync(join(tmpdir(), 'trellis-e2e-hooks-'));
    mkdirSync(join(home, 'dags'));
    writeFileSync(join(home, 'dags', 'ok.yaml'), 'steps:\n  - {name: greet, command: echo hi}\n');
    writeFileSync(
      join(home, 'config.yaml'),
      [
        'webhooks:',
        '  retryBaseDelayMs: 100',
        '  subscriptions:',
        '    - name: ci',
        `      url: ${receiver.url}`,
        `      secret: ${SECRET}`,
        '      dags: [ok]',
      ].join('\n'),
    );
    const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, SVC_HOME: home };
    server = await startAll(env);
    const started = await callApi(`${server.url}/api/v2`, 'POST', '/dags/ok/start', {});
    expect(started.status).toBe(200);
    const runId = started.body.dagRunId as string;
    await receiver.untilReceived(2); // refused twice
    expect(await server.stop()).toBe(0);
    refuse = false;
    const before = receiver.received.length;
    server = await startAll(env);
    const got = await receiver.untilReceived(before + 1);
    const ids = new Set(got.map((h) => h.headers[WebhookHeader.EventId]));
    expect(ids.size).toBe(1);
    for (const h of got) {
      const ts = Number(h.headers[WebhookHeader.Timestamp]);
      expect(
        verifyWebhookSignature(SECRET, ts, h.body, String(h.headers[WebhookHeader.Signature])),
      ).toBe(true);
      expect(JSON.parse(h.body)).toMatchObject({
        type: 'run:finished',
        dag: 'ok',
        dagRunId: runId,
      });
    }
    // the log shows it delivered once the journal has the answer
    const base = `${server.url}/api/v2`;
    let log = await callApi(base, 'GET', `/webhooks/deliveries?dagRunId=${runId}&state=delivered`);
    for (let i = 0; i < 100 && (log.body.deliveries as unknown[]).length === 0; i++) {
      await new Promise((r) => setTimeout(r, 20)); // another process: the API is the only window
      log = await callApi(base, 'GET', `/webhooks/deliveries?dagRunId=${runId}&state=delivered`);
    }
    const [d] = log.body.deliveries as { id: string; attempts: { status?: number }[] }[];
    expect(d?.id).toBe([...ids][0]);
    expect(d?.attempts.at(-1)?.status).toBe(200);
    expect(d?.attempts.length).toBe(got.length);
  });
});
