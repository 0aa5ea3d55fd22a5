import { RunStatus } from '@trellis/core';
import type { RunReads, RunSummaryRecord } from '../runs/run-reads.js';
import type { CustomQueue } from './queue-of.js';

/** One queue as GET /queues shows it. */
export interface QueueOccupancy {
  readonly name: string;
  readonly type: 'custom' | 'dag-based';
  /** A custom queue's `maxConcurrency`. */
  readonly maxConcurrency?: number;
  readonly running: readonly RunSummaryRecord[];
  /** FIFO: oldest queued first. */
  readonly queued: readonly RunSummaryRecord[];
}

/**
 * Every configured custom queue (even when empty), and every dag-based queue that has running or
 * queued runs, sorted by name; runs grouped by the queue they run through.
 */
export const queueOccupancy = async (
  reads: Pick<RunReads, 'list'>,
  custom: readonly CustomQueue[],
  /** Passed to the run listings (`RunListFilter.maxStaleMs`). @default 0 */
  maxStaleMs = 0,
): Promise<QueueOccupancy[]> => {
  const [running, queued] = await Promise.all([
    reads.list({ status: RunStatus.Running, maxStaleMs }),
    reads.list({ status: RunStatus.Queued, maxStaleMs }),
  ]);
  const declared = new Map(custom.map((q) => [q.name, q.maxConcurrency]));
  const groups = new Map<string, { running: RunSummaryRecord[]; queued: RunSummaryRecord[] }>();
  for (const name of declared.keys()) groups.set(name, { running: [], queued: [] });
  const add = (run: RunSummaryRecord, kind: 'running' | 'queued'): void => {
    const name = run.queue || run.name;
    const g = groups.get(name) ?? { running: [], queued: [] };
    g[kind].push(run);
    groups.set(name, g);
  };
  running.forEach((x) => add(x, 'running'));
  queued.forEach((x) => add(x, 'queued'));
  return [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, g]) => ({
      name,
      type: declared.has(name) ? ('custom' as const) : ('dag-based' as const),
      ...(declared.has(name) ? { maxConcurrency: declared.get(name) ?? 1 } : {}),
      running: g.running,
      queued: [...g.queued].reverse(),
    }));
};
