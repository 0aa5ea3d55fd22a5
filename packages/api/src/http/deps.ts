import type { HealthVerdict } from '../metrics/health.js';
import type { Clock } from '@trellis/core';
import type { WorkerInfo } from '@trellis/contract';
import type {
  CustomQueue,
  DagDefinitions,
  FinalRecords,
  IdempotentTriggers,
  RunEvents,
  RunReads,
  RunService,
  WebhookDeliveries,
} from '@trellis/services';
import type { HttpLogger } from '../errors/error-middleware.js';
import type { Authenticator } from './auth.js';
import type { SseOptions } from './sse.js';

/** What the HTTP layer needs: services and probes, never a concrete store (docs/architecture.md). */
export interface HttpDeps {
  readonly version: string;
  /** When this server started (health `uptime`). */
  readonly startedAt: Date;
  readonly clock: Clock;
  readonly dags: DagDefinitions;
  readonly runs: RunService;
  /** Stored runs, their children and logs: the API reads runs only through here. */
  readonly reads: RunReads;
  readonly auth: Authenticator;
  readonly log: HttpLogger;
  /** Store writable, scheduler answering; an `error` makes /health answer 503. */
  readonly health: () => Promise<HealthVerdict>;
  /**
   * Prometheus text exposition of the `svc_*` metrics; only `names` when given (an unknown name
   * throws bad_request).
   */
  readonly metrics: (
    names?: readonly string[],
  ) => Promise<{ readonly contentType: string; readonly body: string }>;
  /** Custom queues from config.yaml (`queues`), for GET /queues. @default [] */
  readonly queueConfig?: readonly CustomQueue[];
  /**
   * The coordinator's worker registry (distributed mode). Absent when no coordinator runs in this
   * process: GET /workers answers 503 service_unavailable.
   */
  readonly workers?: () => readonly WorkerInfo[];
  /**
   * Cordons, drains or uncordons (`active`) a worker: the worker after the change, and whether
   * the change was handed on to the coordinator it is connected to (applied within about a
   * second); undefined for a worker no coordinator knows. Absent with `workers`.
   */
  readonly setWorkerState?: (
    id: string,
    state: 'active' | 'draining' | 'cordoned',
  ) => Promise<{ readonly worker: WorkerInfo; readonly handedOn: boolean } | undefined>;
  /**
   * The event bus (run, step, queue and worker transitions): the long-poll on a run, GET /events
   * and the live log stream. Absent: those answer 503 service_unavailable.
   */
  readonly events?: RunEvents;
  /** The records of runs that just ended, for the waiters their end wakes (run-wait.ts). */
  readonly finals?: FinalRecords;
  /** Heartbeat and buffer bound of the event streams. @default 15 s, 1 MiB */
  readonly sse?: SseOptions;
  /**
   * Idempotency keys of start and enqueue (kept under the data dir). Absent: a request with an
   * `Idempotency-Key` answers 503 service_unavailable.
   */
  readonly idempotency?: IdempotentTriggers;
  /**
   * Webhook deliveries of this process (GET /webhooks/deliveries). Absent: that answers 503
   * service_unavailable.
   */
  readonly webhooks?: WebhookDeliveries;
  /** Whether GET /metrics needs credentials. @default false (public) */
  readonly metricsPrivate?: boolean;
}
