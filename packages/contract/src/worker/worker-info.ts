import type { WorkerHealth } from './worker-health.js';
import type { RunningTask } from './worker.schema.js';

/**
 * A worker as the coordinator's registry has it and the API maps it to the wire (domain form:
 * camelCase, `Date`, health computed from heartbeat age).
 */
export interface WorkerInfo {
  readonly id: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly health: WorkerHealth;
  readonly lastHeartbeat: Date;
  readonly runningTasks: readonly RunningTask[];
  /** Beside the spec's fields: what the worker says of itself (absent: unknown). */
  readonly version?: string;
  readonly host?: string;
  readonly startedAt?: string;
  readonly capacity?: number;
  readonly slotsBusy?: number;
  readonly state?: 'active' | 'draining' | 'cordoned';
}
