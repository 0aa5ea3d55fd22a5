import type { ApiNode, ApiRunDetails } from '@trellis/contract';
// the statuses from core's entry without imports: the contract barrel builds the API's zod
// schemas, which every command (a worker too) would load with the command table
import { isFinalNodeStatus, type NodeStatus } from '@trellis/core/status';
import type { RunRef, RunSource } from './run-source.js';
import {
  POLL_PAUSE_MS,
  isFinal,
  realClock,
  type WaitClock,
  type WaitOutcome,
} from './wait-final.js';

/** Lines per log request (the API's largest `limit`). */
const PAGE = 10_000;

/** Where followed lines go: stdout lines and stderr lines of the steps. */
export interface FollowSinks {
  readonly stdout: (line: string) => void;
  readonly stderr: (line: string) => void;
}

/** The step and handler nodes of a run. */
export const nodesOf = (d: ApiRunDetails): ApiNode[] =>
  [...d.nodes, d.onSuccess, d.onFailure, d.onCancel, d.onExit].filter(
    (n): n is ApiNode => n !== null,
  );

/**
 * Prints the steps' output as it is written, each line prefixed by `<step> | `, by reading the
 * step log endpoint from the line after the last one printed. A node's last line is held back
 * while the node runs (it may still be half written) and printed once more follows or the node
 * ended. Positions are kept per log file, so a retried step that writes a new file starts over.
 */
export class LogFollower {
  readonly #printed = new Map<string, number>();

  constructor(
    private readonly source: RunSource,
    private readonly ref: RunRef,
    private readonly sinks: FollowSinks,
  ) {}

  /** Prints what is new in every started node of `d`; true when anything was printed. */
  async poll(d: ApiRunDetails): Promise<boolean> {
    let printed = false;
    for (const node of nodesOf(d)) {
      if (node.status === 0) continue;
      const done = isFinalNodeStatus(node.status as NodeStatus);
      for (const stream of ['stdout', 'stderr'] as const) {
        if (await this.#drain(node, stream, done)) printed = true;
      }
    }
    return printed;
  }

  async #drain(node: ApiNode, stream: 'stdout' | 'stderr', done: boolean): Promise<boolean> {
    const file = node[stream];
    if (!file) return false;
    const sink = this.sinks[stream];
    let printed = false;
    for (;;) {
      const seen = this.#printed.get(file) ?? 0;
      const chunk = await this.source.stepLog(this.ref, node.step.name, stream, {
        offset: seen + 1,
        limit: PAGE,
      });
      if (!chunk || chunk.lineCount === 0) return printed;
      const lines = chunk.content.split('\n').slice(0, chunk.lineCount);
      // without more after it, the last line of a running step may be cut mid-write
      const show = !chunk.hasMore && !done ? lines.slice(0, -1) : lines;
      for (const line of show) sink(`${node.step.name} | ${line}`);
      this.#printed.set(file, seen + show.length);
      printed ||= show.length > 0;
      if (!chunk.hasMore) return printed;
    }
  }
}

/**
 * Follows the run's output until it is final (the last output printed) or `timeoutMs` passed;
 * after a round that printed nothing it pauses {@link POLL_PAUSE_MS}.
 */
export const followUntilFinal = async (
  source: RunSource,
  ref: RunRef,
  sinks: FollowSinks,
  opts: { timeoutMs?: number | undefined; clock?: WaitClock } = {},
): Promise<WaitOutcome> => {
  const clock = opts.clock ?? realClock;
  const deadline = opts.timeoutMs === undefined ? Infinity : clock.now() + opts.timeoutMs;
  const follower = new LogFollower(source, ref, sinks);
  for (;;) {
    const details = await source.details(ref);
    const printed = await follower.poll(details);
    if (isFinal(details)) return { details, timedOut: false };
    if (clock.now() >= deadline) return { details, timedOut: true };
    if (!printed) await clock.sleep(Math.min(POLL_PAUSE_MS, Math.max(0, deadline - clock.now())));
  }
};
