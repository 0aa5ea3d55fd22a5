import type { CoordinatorClient, LogChunk, StatusReport } from '@trellis/coordinator/client';
import { BATCH_BYTES, ITEM_BYTES } from './outbox-policy.js';

/** A queued message and the journal entries it stands for (several after joins). */
export type LaneItem =
  | { readonly kind: 'status'; report: StatusReport; readonly final: boolean; ids: number[] }
  | { readonly kind: 'log'; chunk: LogChunk; ids: number[] };

/** One run's queue: delivered in order by its own pump. */
export interface Lane {
  readonly items: LaneItem[];
  /** How many items at the head are in a call now. */
  sending: number;
  pumping: boolean;
  /** Aborts the settle wait of a running report at the head (a final report arrived). */
  settle: AbortController | undefined;
}

/** What one call delivered. */
export interface Delivered {
  /** Journal entries the coordinator took. */
  readonly ids: number[];
  /** Messages sent. */
  readonly count: number;
  /** The coordinator no longer gives the run to this worker. */
  readonly dropped: boolean;
}

export const newLane = (): Lane => ({ items: [], sending: 0, pumping: false, settle: undefined });

/** True when a later status report is queued behind the head. */
export const hasLaterStatus = (lane: Lane): boolean =>
  lane.items.some((it, i) => i > 0 && it.kind === 'status');

/**
 * Joins a log chunk to the last queued item when it continues the same file (fewer, larger
 * messages); false when it cannot (a call carries that item now, another file, a gap, or full).
 */
export const joinLog = (lane: Lane, chunk: LogChunk, id: number): boolean => {
  const last = lane.items.at(-1);
  if (
    last?.kind !== 'log' ||
    lane.items.length <= lane.sending ||
    last.chunk.path !== chunk.path ||
    last.chunk.offset + last.chunk.data.length !== chunk.offset ||
    last.chunk.data.length >= ITEM_BYTES
  )
    return false;
  last.chunk = { ...last.chunk, data: Buffer.concat([last.chunk.data, chunk.data]) };
  last.ids.push(id);
  return true;
};

/**
 * Each report is the complete record: the lane's last status report replaces every status report
 * before it that is not in a call now, wherever it sits (the log chunks between still go first,
 * in order, as they precede the later report). Log chunks that reports stood between then go in
 * one stream, not one stream each. The replaced reports' journal entries go with the last one,
 * acknowledged when it is delivered. True when a report was replaced.
 */
export const foldStatuses = (lane: Lane): boolean => {
  let last = -1;
  for (let i = lane.items.length - 1; i >= lane.sending; i--)
    if (lane.items[i]?.kind === 'status') {
      last = i;
      break;
    }
  const later = lane.items[last];
  if (later?.kind !== 'status') return false;
  let folded = false;
  for (let i = last - 1; i >= lane.sending; i--) {
    const it = lane.items[i];
    if (it?.kind !== 'status') continue;
    // A child run's first report carries its DAG snapshot: the replacement takes it over.
    if (it.report.snapshotJson !== '' && later.report.snapshotJson === '')
      later.report = { ...later.report, snapshotJson: it.report.snapshotJson };
    later.ids.push(...it.ids);
    lane.items.splice(i, 1);
    folded = true;
  }
  return folded;
};

/**
 * The lane's oldest journal entry. Items are queued in journal order, and only a status report
 * can hold older entries (those of the reports it replaced), so the head and the reports tell.
 */
export const oldestIdOf = (lane: Lane): number | undefined => {
  let oldest: number | undefined;
  lane.items.forEach((it, i) => {
    if (i > 0 && it.kind !== 'status') return;
    for (const n of it.ids) if (oldest === undefined || n < oldest) oldest = n;
  });
  return oldest;
};

/** Sends the head of the lane: its status report, or the log chunks at its head (one stream). */
export const sendHead = async (lane: Lane, client: CoordinatorClient): Promise<Delivered> => {
  const head = lane.items[0];
  if (!head) return { ids: [], count: 0, dropped: false };
  if (head.kind === 'status') {
    lane.sending = 1;
    const ack = await client.report(head.report);
    lane.sending = 0;
    lane.items.shift();
    return { ids: head.ids, count: 1, dropped: ack.dropped };
  }
  let n = 0;
  let bytes = 0;
  for (const it of lane.items) {
    if (it.kind !== 'log' || bytes >= BATCH_BYTES) break;
    n++;
    bytes += it.chunk.data.length;
  }
  lane.sending = n;
  const items = lane.items.slice(0, n) as Extract<LaneItem, { kind: 'log' }>[];
  await client.sendLogs(items.map((it) => it.chunk));
  lane.sending = 0;
  lane.items.splice(0, n);
  return { ids: items.flatMap((it) => it.ids), count: n, dropped: false };
};
