/**
 * The names of the outbound events (docs/api.md, "Events"): the event stream's `type` filter and
 * a webhook subscription's `events` accept the same names, so they live here, below both.
 */

/** Every event type, `noun:verb` (docs/api.md lists what each carries). */
export const RUN_EVENT_TYPES = [
  'run:queued',
  'run:started',
  'run:finished',
  'step:started',
  'step:finished',
  'queue:entered',
  'queue:left',
  'worker:joined',
  'worker:lost',
] as const;
export type RunEventType = (typeof RUN_EVENT_TYPES)[number];

/** The nouns a filter may name instead of one type (`run` = every `run:*`). */
export const RUN_EVENT_NOUNS = ['run', 'step', 'queue', 'worker'] as const;
