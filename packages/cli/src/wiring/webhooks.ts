import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { systemClock } from '@trellis/core';
import { WebhookDeliveries, fetchWebhookTransport } from '@trellis/services';
import { FsWebhookJournal } from '@trellis/store';
import type { Runtime } from './runtime.js';

/**
 * The server's webhook deliveries (config `webhooks`): journaled under `<dataDir>/webhooks`, fed
 * by the runtime's event bus. Started before the server listens, so pending deliveries resume and
 * no event of a run it starts is missed; stopped after the runs drained.
 */
export const startWebhooks = async (
  rt: Runtime,
  warn: (line: string) => void,
): Promise<WebhookDeliveries> => {
  const c = rt.config.webhooks;
  const hooks = new WebhookDeliveries({
    subscriptions: c.subscriptions,
    journal: new FsWebhookJournal({ dir: join(rt.config.paths.dataDir, 'webhooks'), warn }),
    transport: fetchWebhookTransport,
    events: rt.runEvents,
    clock: systemClock,
    policy: {
      baseDelayMs: c.retryBaseDelayMs,
      maxDelayMs: c.retryMaxDelayMs,
      retryForMs: c.retryForSec * 1000,
    },
    timeoutMs: c.timeoutMs,
    maxJournalEntries: c.maxJournalEntries,
    ids: randomUUID,
    warn,
  });
  await hooks.start();
  return hooks;
};
