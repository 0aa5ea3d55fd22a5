import type { ApiWebhookDelivery } from '@trellis/contract';
import type { WebhookDelivery } from '@trellis/services';

const iso = (ms: number): string => new Date(ms).toISOString();

/** A journaled delivery as the delivery log shows it (times in ISO 8601, the body parsed). */
export const toApiWebhookDelivery = (d: WebhookDelivery): ApiWebhookDelivery => ({
  id: d.id,
  subscription: d.subscription,
  eventType: d.eventType,
  ...(d.dag !== undefined ? { dag: d.dag } : {}),
  ...(d.dagRunId !== undefined ? { dagRunId: d.dagRunId } : {}),
  state: d.state,
  createdAt: iso(d.createdAtMs),
  ...(d.state === 'pending' && d.nextAttemptAtMs !== undefined
    ? { nextAttemptAt: iso(d.nextAttemptAtMs) }
    : {}),
  attempts: d.attempts.map((a) => ({
    at: iso(a.atMs),
    durationMs: a.durationMs,
    ...(a.status !== undefined ? { status: a.status } : {}),
    ...(a.error !== undefined ? { error: a.error } : {}),
  })),
  event: JSON.parse(d.body) as Record<string, unknown>,
});
