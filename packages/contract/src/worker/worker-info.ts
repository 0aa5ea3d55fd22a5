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
  /** Runs it may execute at once (its last heartbeat's capacity), when known. */
  readonly capacity?: number;
}
