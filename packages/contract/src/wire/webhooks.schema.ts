import { z } from 'zod';

/** Delivery states of the webhook log (docs/api.md, "Webhooks"). */
export const WEBHOOK_DELIVERY_STATES = ['pending', 'delivered', 'failed'] as const;

/** GET /webhooks/deliveries query: filters and a page size (newest first). */
export const WebhookDeliveriesQuery = z.object({
  subscription: z.string().optional().describe('Only deliveries to this subscription (its name)'),
  state: z
    .enum(WEBHOOK_DELIVERY_STATES, {
      error: 'must be pending, delivered or failed',
    })
    .optional()
    .describe(
      'pending (an attempt is due), delivered (a 2xx answer) or failed (retried long enough)',
    ),
  dagRunId: z.string().optional().describe('Only deliveries of events of this run'),
  limit: z
    .string()
    .regex(/^\d{1,5}$/, 'must be a whole number from 1 to 1000')
    .transform(Number)
    .refine((n) => n >= 1 && n <= 1000, 'must be a whole number from 1 to 1000')
    .optional()
    .describe('At most this many deliveries, newest first; 1 to 1000, default 100'),
});

const WebhookAttemptSchema = z.object({
  at: z.string().describe('When the attempt started (ISO 8601)'),
  durationMs: z.number().int(),
  status: z.number().int().optional().describe("The receiver's HTTP status; absent when none came"),
  error: z.string().optional().describe('Why the attempt failed'),
});

const WebhookDeliverySchema = z.object({
  id: z.string().describe('The event id, sent in the Trellis-Event-Id header of every attempt'),
  subscription: z.string(),
  eventType: z.string().describe('As on the event stream, e.g. run:finished'),
  dag: z.string().optional(),
  dagRunId: z.string().optional(),
  state: z.enum(WEBHOOK_DELIVERY_STATES),
  createdAt: z.string().describe('When the event happened (ISO 8601)'),
  nextAttemptAt: z.string().optional().describe('When the next attempt is due, while pending'),
  attempts: z.array(WebhookAttemptSchema),
  event: z.record(z.string(), z.unknown()).describe('The JSON body sent'),
});
export type ApiWebhookDelivery = z.infer<typeof WebhookDeliverySchema>;

/** GET /webhooks/deliveries response. */
export const WebhookDeliveriesResponse = z.object({
  deliveries: z.array(WebhookDeliverySchema),
});
