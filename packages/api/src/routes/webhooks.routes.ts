import { AppError, ErrorCode } from '@trellis/core';
import { WebhookDeliveriesQuery, WebhookDeliveriesResponse } from '@trellis/contract';
import { defineRoutes } from '../http/define-routes.js';
import type { HttpDeps } from '../http/deps.js';
import { toApiWebhookDelivery } from '../wire/webhook-delivery.mapper.js';

/** The webhook delivery log (beyond the spec: docs/api.md, "Webhooks"); read permission. */
export const webhookRoutes = defineRoutes<HttpDeps>((r) => [
  r.get('/webhooks/deliveries', {
    query: WebhookDeliveriesQuery,
    response: WebhookDeliveriesResponse,
    summary:
      'The webhook delivery log, newest first: each event sent to a subscription, its state and every attempt',
    handler: ({ query }, deps) => {
      const hooks = deps.webhooks;
      if (!hooks)
        throw new AppError(
          ErrorCode.ServiceUnavailable,
          'webhooks are not delivered by this process: ask the server (trellis server or start-all)',
        );
      if (query.subscription !== undefined && !hooks.subscriptionNames.includes(query.subscription))
        throw new AppError(
          ErrorCode.BadRequest,
          `invalid query: subscription: "${query.subscription}" is not configured: use one of ${hooks.subscriptionNames.join(', ') || '(none: add webhooks.subscriptions to config.yaml)'}`,
          { subscription: query.subscription },
        );
      const deliveries = hooks.list({
        limit: query.limit ?? 100,
        ...(query.subscription !== undefined ? { subscription: query.subscription } : {}),
        ...(query.state !== undefined ? { state: query.state } : {}),
        ...(query.dagRunId !== undefined ? { dagRunId: query.dagRunId } : {}),
      });
      return Promise.resolve({
        status: 200,
        body: { deliveries: deliveries.map(toApiWebhookDelivery) },
      });
    },
  }),
]);
