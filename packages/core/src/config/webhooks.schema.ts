import * as z from 'zod';
import { RUN_EVENT_NOUNS, RUN_EVENT_TYPES } from '../events/event-names.js';
import { checkUniqueNames, intAtLeast, section, text } from './schema-helpers.js';

/*
 * `webhooks` of config.yaml: completion callbacks (docs/configuration.md, "Webhooks"). Events are
 * named as on the event stream (packages/core/src/events/event-names.ts lists them for both).
 */

/** Event types and nouns a subscription may name (`run` = every `run:*`), as on the event stream. */
export const WEBHOOK_EVENT_NAMES = [...RUN_EVENT_NOUNS, ...RUN_EVENT_TYPES] as const;

const URL_HINT = 'use an absolute http(s) URL, e.g. https://ci.example.com/hooks/trellis';

const isHttpUrl = (url: string): boolean => {
  try {
    const { protocol } = new URL(url);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
};

const EVENT_HINT = `use event types or nouns as on the event stream: ${WEBHOOK_EVENT_NAMES.join(', ')}`;

/** The keys of one `webhooks.subscriptions` entry. */
const subscriptionShape = {
  /** Unique name, shown in the delivery log. */
  name: text('a subscription name, e.g. ci'),
  /** Where events are POSTed as JSON. */
  url: z.string({ error: URL_HINT }).refine(isHttpUrl, { error: URL_HINT }),
  /** The key of the HMAC-SHA256 signature header; at least 16 characters. */
  secret: z
    .string({ error: 'use a random string of at least 16 characters' })
    .min(16, { error: 'use a random string of at least 16 characters, e.g. openssl rand -hex 32' }),
  /** Event types or nouns to send. @default `['run:finished']` */
  events: z
    .array(
      z
        .string({ error: EVENT_HINT })
        .refine((e) => (WEBHOOK_EVENT_NAMES as readonly string[]).includes(e), {
          error: EVENT_HINT,
        }),
      { error: EVENT_HINT },
    )
    .min(1, { error: EVENT_HINT })
    .default(['run:finished']),
  /** Only events of runs of these DAGs (by name); empty sends every DAG's. @default `[]` */
  dags: z.array(text('a DAG name'), { error: 'use a list of DAG names' }).default([]),
  /** Requests to this subscription at once (at least 1). @default `4` */
  maxConcurrency: intAtLeast(1, 4).default(4),
};

const webhooksShape = {
  /** Where run events are sent. @default `[]` */
  subscriptions: z
    .array(section(subscriptionShape), { error: 'use a list of subscriptions, e.g. - name: ci' })
    .superRefine((subs, ctx) => checkUniqueNames(subs, ctx, 'subscription'))
    .default([]),
  /** Delay before the first retry, in ms; each later one doubles. @default `1000` */
  retryBaseDelayMs: intAtLeast(1, 1000).default(1000),
  /** Longest delay between two attempts, in ms. @default `3600000` (1 h) */
  retryMaxDelayMs: intAtLeast(1, 3_600_000).default(3_600_000),
  /** How long after its event a delivery is retried, in seconds. @default `86400` (24 h) */
  retryForSec: intAtLeast(1, 86_400).default(86_400),
  /** How long one request may take, in ms. @default `10000` */
  timeoutMs: intAtLeast(1, 10_000).default(10_000),
  /** Deliveries kept in the journal (pending and the log); finished ones go first. @default `10000` */
  maxJournalEntries: intAtLeast(1, 10_000).default(10_000),
};

export const WebhooksSchema = section(webhooksShape);

/** Keys of the mappings inside `webhooks`, for "did you mean" hints. */
export const WEBHOOK_SUBKEYS = {
  webhooks: Object.keys(webhooksShape),
  'webhooks.subscriptions.[]': Object.keys(subscriptionShape),
} as const;
