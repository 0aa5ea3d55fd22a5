import type { Clock } from '@trellis/core';
import {
  Feature,
  type CoordinatorClient,
  type LogChunk,
  type LogStream,
  type StatusAck,
  type StatusReport,
} from '@trellis/coordinator/client';
import { BATCH_BYTES, CARRIED_BYTES, ITEM_BYTES, SETTLE_MS } from './outbox-policy.js';

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
  /** The log chunks held back at the head, which chunks queued meanwhile join. */
  held: HeldLogs | undefined;
}

/** The log chunks a lane holds back before sending them (`sendHead`). */
export interface HeldLogs {
  /** Writes the lane's log chunks queued since; ends the hold when it must. */
  readonly feed: () => void;
  /** Ends the hold now: the chunks are sent. */
  readonly close: () => void;
}

/** How the log chunks at the head are held back for the chunks that follow them. */
export interface LogHold {
  readonly clock: Clock;
  /** How long at most (ms). */
  readonly ms: number;
  /** Ends every hold (the outbox stops). */
  readonly stop: AbortSignal;
  /** True when nothing may wait (a caller waits for delivery, or producers for room). */
  readonly urgent: () => boolean;
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

export const newLane = (): Lane => ({
  items: [],
  sending: 0,
  pumping: false,
  settle: undefined,
  held: undefined,
});

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
const oldestIdOf = (lane: Lane): number | undefined => {
  let oldest: number | undefined;
  lane.items.forEach((it, i) => {
    if (i > 0 && it.kind !== 'status') return;
    for (const n of it.ids) if (oldest === undefined || n < oldest) oldest = n;
  });
  return oldest;
};

/** The oldest journal entry of all `lanes` (see {@link oldestIdOf}). */
export const oldestIdOfLanes = (lanes: Iterable<Lane>): number | undefined => {
  let oldest: number | undefined;
  for (const lane of lanes) {
    const n = oldestIdOf(lane);
    if (n !== undefined && (oldest === undefined || n < oldest)) oldest = n;
  }
  return oldest;
};

/**
 * A running report at the head waits SETTLE_MS for a later one (which replaces it), unless a
 * final report ends the wait (`lane.settle`), or `stop` aborts.
 */
export const settleHead = async (lane: Lane, clock: Clock, stop: AbortSignal): Promise<void> => {
  const settle = new AbortController();
  lane.settle = settle;
  const end = (): void => settle.abort();
  stop.addEventListener('abort', end, { once: true });
  await clock.sleep(SETTLE_MS, settle.signal).catch(() => undefined);
  stop.removeEventListener('abort', end);
  lane.settle = undefined;
};

/**
 * Sends the head of the lane: its status report, or the log chunks at its head, held back
 * (`hold`) for the chunks queued after them until a status report is queued behind them (it
 * goes only once they are applied), the batch is full, or the hold ends. A final report right
 * behind them carries them, in one call, to a coordinator that takes log chunks in a report
 * (`Feature.ReportLogs`); otherwise they go on one stream, then the report. `sync` makes a
 * report's journal line durable: started as the report leaves, awaited before it counts as sent.
 */
export const sendHead = async (
  lane: Lane,
  client: CoordinatorClient,
  hold: LogHold,
  sync: () => Promise<void>,
): Promise<Delivered> => {
  const head = lane.items[0];
  if (!head) return { ids: [], count: 0, dropped: false };
  if (head.kind === 'status') return sendReport(lane, client, sync, 0);
  // Held back unsent to a coordinator that takes them in a report (a final one may carry them),
  // else written as they come on a stream opened now.
  const carry = client.takes(Feature.ReportLogs);
  let stream = carry ? undefined : client.openLogs();
  const bytes = await holdLogs(lane, hold, stream);
  const next = lane.items[lane.sending];
  if (stream === undefined) {
    if (next?.kind === 'status' && next.final && bytes <= CARRIED_BYTES)
      return sendReport(lane, client, sync, lane.sending);
    stream = client.openLogs();
    for (const it of lane.items.slice(0, lane.sending))
      if (it.kind === 'log') stream.write(it.chunk);
  }
  await stream.end();
  const items = lane.items.splice(0, lane.sending);
  lane.sending = 0;
  return { ids: items.flatMap((it) => it.ids), count: items.length, dropped: false };
};

/** The lane position of the report a failed call carried log chunks in (`sendReport`). */
const failedAt = new WeakMap<Error, number>();

/**
 * Takes out the item a refused call was about (`e`): the report, when it carried the chunks
 * before it (they stay at the head and go next, on a stream), else the head.
 */
export const takeRefused = (lane: Lane, e: Error): LaneItem | undefined =>
  lane.items.splice(failedAt.get(e) ?? 0, 1)[0];

/** A queued message, as a warning names it. */
export const describeItem = (it: LaneItem): string =>
  it.kind === 'status'
    ? `status report ${it.report.seq} of run ${it.report.run?.dagRunId ?? '?'}`
    : `log chunk of ${it.chunk.path} at offset ${it.chunk.offset}`;

/**
 * Sends the status report at `at`, carrying the `at` log chunks before it. A coordinator that
 * did not take them (an older one, behind an address that named the feature) stored the report
 * alone: the chunks stay at the head and go next, on a stream, late but not lost.
 */
const sendReport = async (
  lane: Lane,
  client: CoordinatorClient,
  sync: () => Promise<void>,
  at: number,
): Promise<Delivered> => {
  const item = lane.items[at];
  if (item?.kind !== 'status') throw new Error('no status report to send');
  const logs = lane.items.slice(0, at).flatMap((it) => (it.kind === 'log' ? [it.chunk] : []));
  lane.sending = at + 1;
  const synced = sync();
  synced.catch(() => undefined); // awaited below; a failed send must not leave it unheard
  let ack: StatusAck;
  try {
    ack = await client.report(logs.length > 0 ? { ...item.report, logs } : item.report);
    await synced;
  } catch (e) {
    if (at > 0 && e instanceof Error) failedAt.set(e, at); // not the chunks before it
    throw e;
  } finally {
    lane.sending = 0;
  }
  const taken = logs.length === 0 || ack.logsApplied === true;
  const items = taken ? lane.items.splice(0, at + 1) : lane.items.splice(at, 1);
  return { ids: items.flatMap((it) => it.ids), count: items.length, dropped: ack.dropped };
};

/**
 * Marks the log chunks at the head of the lane as in a call (up to a batch), and those queued
 * while they are held, writing each to `stream` if given, until a status report is queued
 * behind them, the batch is full, it is urgent, or the hold ends. Their bytes.
 */
const holdLogs = async (
  lane: Lane,
  hold: LogHold,
  stream: LogStream | undefined,
): Promise<number> => {
  const held = new AbortController();
  let bytes = 0;
  const feed = (): void => {
    for (let it = lane.items[lane.sending]; it?.kind === 'log' && bytes < BATCH_BYTES;) {
      stream?.write(it.chunk);
      bytes += it.chunk.data.length;
      it = lane.items[++lane.sending];
    }
    // a status report (or a chunk past the batch) waits behind them
    if (lane.items.length > lane.sending || hold.urgent()) held.abort();
  };
  const close = (): void => held.abort();
  lane.sending = 0;
  feed();
  lane.held = { feed, close };
  if (!held.signal.aborted && !hold.stop.aborted) {
    hold.stop.addEventListener('abort', close, { once: true });
    await hold.clock.sleep(hold.ms, held.signal).catch(() => undefined);
    hold.stop.removeEventListener('abort', close);
  }
  lane.held = undefined;
  return bytes;
};
