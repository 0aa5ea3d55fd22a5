import type { Clock } from '@trellis/core';
import type {
  CoordinatorClient,
  LogChunk,
  LogStream,
  StatusReport,
} from '@trellis/coordinator/client';
import { BATCH_BYTES, ITEM_BYTES, SETTLE_MS } from './outbox-policy.js';

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
  /** The log stream held open at the head, which chunks queued meanwhile join. */
  stream: OpenStream | undefined;
}

/** A log stream a lane holds open (`sendHead`). */
export interface OpenStream {
  /** Writes the lane's log chunks queued since; ends the hold when it must. */
  readonly feed: () => void;
  /** Ends the hold now: the stream is closed and its answer awaited. */
  readonly close: () => void;
}

/** How a log stream at the head is held open for the chunks that follow it. */
export interface StreamHold {
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
  stream: undefined,
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
 * Sends the head of the lane: its status report, or the log chunks at its head on one stream,
 * held open (`hold`) for the chunks queued after them until a status report is queued behind
 * them (it goes only once they are applied), the batch is full, or the hold ends: the last lines
 * of a run and its final report cost one stream and one call, not two streams and one call.
 */
export const sendHead = async (
  lane: Lane,
  client: CoordinatorClient,
  hold: StreamHold,
): Promise<Delivered> => {
  const head = lane.items[0];
  if (!head) return { ids: [], count: 0, dropped: false };
  if (head.kind === 'status') {
    lane.sending = 1;
    const ack = await client.report(head.report);
    lane.sending = 0;
    lane.items.shift();
    return { ids: head.ids, count: 1, dropped: ack.dropped };
  }
  await streamLogs(lane, client.openLogs(), hold);
  const items = lane.items.splice(0, lane.sending);
  lane.sending = 0;
  return { ids: items.flatMap((it) => it.ids), count: items.length, dropped: false };
};

/** The log chunks at the head of the lane, and those queued while the stream is held open. */
const streamLogs = async (lane: Lane, stream: LogStream, hold: StreamHold): Promise<void> => {
  const held = new AbortController();
  let bytes = 0;
  const feed = (): void => {
    for (let it = lane.items[lane.sending]; it?.kind === 'log' && bytes < BATCH_BYTES;) {
      stream.write(it.chunk);
      bytes += it.chunk.data.length;
      it = lane.items[++lane.sending];
    }
    // a status report (or a chunk past the batch) waits behind the stream
    if (lane.items.length > lane.sending || hold.urgent()) held.abort();
  };
  const close = (): void => held.abort();
  lane.sending = 0;
  feed();
  lane.stream = { feed, close };
  if (!held.signal.aborted && !hold.stop.aborted) {
    hold.stop.addEventListener('abort', close, { once: true });
    await hold.clock.sleep(hold.ms, held.signal).catch(() => undefined);
    hold.stop.removeEventListener('abort', close);
  }
  lane.stream = undefined;
  await stream.end();
};
