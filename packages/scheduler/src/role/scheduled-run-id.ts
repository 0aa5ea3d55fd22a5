import { createHash } from 'node:crypto';

/**
 * The run id of a cron start fire: a name-based UUID (version 5 layout, RFC 9562) of the DAG and
 * the fire time, the same on every instance. Creating a fire's run is therefore idempotent: a new
 * leader that finds a fire claimed by a predecessor which died before creating its run creates
 * it, and one that finds the run made gets `already_exists` and adds none.
 */
export const scheduledRunId = (dagName: string, fireAt: Date): string => {
  const h = createHash('sha1')
    .update(`trellis schedule\u0000${dagName}\u0000${fireAt.toISOString()}`)
    .digest();
  h[6] = ((h[6] ?? 0) & 0x0f) | 0x50; // version 5
  h[8] = ((h[8] ?? 0) & 0x3f) | 0x80; // RFC variant
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
};
