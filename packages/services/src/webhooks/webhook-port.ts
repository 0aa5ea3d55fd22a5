/** One webhook subscription from config (`webhooks.subscriptions`, docs/configuration.md). */
export interface WebhookSubscription {
  /** Unique name; deliveries and the delivery log name it. */
  readonly name: string;
  /** Where events are POSTed. */
  readonly url: string;
  /** The HMAC-SHA256 key of the signature header. Never stored in the journal. */
  readonly secret: string;
  /** Event types or nouns as on the event stream (`run:finished`, `run`, `step:finished`). */
  readonly events: readonly string[];
  /** Only events of runs of these DAGs; empty means every DAG. */
  readonly dags: readonly string[];
  /** At most this many requests to this subscription at once. */
  readonly maxConcurrency: number;
}

/** One attempt to deliver, as the delivery log shows it. */
export interface WebhookAttempt {
  /** When the attempt started (Unix ms). */
  readonly atMs: number;
  readonly durationMs: number;
  /** The receiver's HTTP status; absent when no answer came (refused, timed out). */
  readonly status?: number;
  /** Why the attempt failed (a non-2xx status with the start of the body, or the error). */
  readonly error?: string;
}

/** `pending` (an attempt is due), `delivered` (a 2xx answer), `failed` (retried long enough). */
export type WebhookDeliveryState = 'pending' | 'delivered' | 'failed';

/** One event to one subscription: the unit that is journaled, retried and shown in the log. */
export interface WebhookDelivery {
  /** The event id header: the same on every attempt, so a receiver drops duplicates. */
  readonly id: string;
  readonly subscription: string;
  readonly eventType: string;
  readonly dag?: string;
  readonly dagRunId?: string;
  /** The exact JSON body, signed anew (with a fresh timestamp) on each attempt. */
  readonly body: string;
  /** When the event happened (Unix ms); retries stop `retryForMs` after. */
  readonly createdAtMs: number;
  readonly state: WebhookDeliveryState;
  readonly attempts: readonly WebhookAttempt[];
  /** When the next attempt is due (Unix ms), while pending. */
  readonly nextAttemptAtMs?: number;
}

/**
 * Where deliveries outlive a restart (`FsWebhookJournal` in @trellis/store: one file per delivery
 * under `<dataDir>/webhooks`). The service bounds how many it keeps.
 */
export interface WebhookJournal {
  /** Every stored delivery (read once at start). */
  loadAll(): Promise<WebhookDelivery[]>;
  /** Creates or replaces the delivery with this id (atomic: a crash keeps the old or the new). */
  save(delivery: WebhookDelivery): Promise<void>;
  remove(id: string): Promise<void>;
}

/** The receiver's answer to one POST. */
export interface WebhookResponse {
  readonly status: number;
  /** The start of the body (for the delivery log of a refusal). */
  readonly bodyStart: string;
}

/** How a delivery is sent (`fetchWebhookTransport`; tests may count or refuse). */
export interface WebhookTransport {
  /** POSTs `body`; rejects when no HTTP answer arrives (refused, reset, timed out, aborted). */
  post(req: {
    readonly url: string;
    readonly headers: Readonly<Record<string, string>>;
    readonly body: string;
    readonly timeoutMs: number;
    readonly signal: AbortSignal;
  }): Promise<WebhookResponse>;
}
