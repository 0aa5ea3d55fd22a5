import { WORKER_HEALTH_STATUS, type ApiWorker, type WorkerInfo } from '@trellis/contract';

/** Domain worker -> spec wire shape. */
export const toApiWorker = (w: WorkerInfo): ApiWorker => ({
  id: w.id,
  labels: { ...w.labels },
  health_status: WORKER_HEALTH_STATUS[w.health],
  last_heartbeat: w.lastHeartbeat.toISOString().replace(/\.\d{3}Z$/, 'Z'),
  running_tasks: w.runningTasks.map((t) => ({ ...t })),
  version: w.version ?? '',
  host: w.host ?? '',
  started_at: w.startedAt ?? '',
  slots_total: w.capacity ?? 0,
  slots_busy: w.slotsBusy ?? 0,
  state: w.state ?? 'active',
});
