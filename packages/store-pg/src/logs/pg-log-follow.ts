import type { LogFollowHandle } from '@trellis/services';
import type { PgLogs } from './pg-logs.js';

/** How often a followed log is polled for new lines. */
const POLL_MS = 250;
/** Lines fetched per poll at most (the rest on the next). */
const BATCH = 1000;

/**
 * Follows a log in the database from line `fromLine` (1-based): the lines there, then new ones
 * as they are appended (polled; `flush` sends the rest, an unfinished last line too, and stops).
 */
export const followPgLog = (
  logs: PgLogs,
  path: string,
  fromLine: number,
  onLines: (lines: readonly string[], first: number) => void,
  onError: (e: Error) => void,
): LogFollowHandle => {
  let next = Math.max(1, fromLine);
  let closed = false;
  let polling = true;
  let timer: NodeJS.Timeout | undefined;
  let busy: Promise<void> = Promise.resolve();
  const pull = async (flush: boolean): Promise<void> => {
    for (;;) {
      const lines = await logs.linesFrom(path, next, BATCH, flush);
      if (lines.length === 0 || closed) return;
      const first = next;
      next += lines.length;
      onLines(lines, first);
      if (lines.length < BATCH) return;
    }
  };
  const tick = (): void => {
    busy = pull(false).then(
      () => {
        if (!closed && polling) timer = setTimeout(tick, POLL_MS);
      },
      (e: unknown) => {
        if (!closed) onError(e instanceof Error ? e : new Error(String(e)));
      },
    );
  };
  tick();
  return {
    flush: async () => {
      polling = false;
      if (timer !== undefined) clearTimeout(timer);
      await busy;
      await pull(true);
      closed = true;
    },
    close: () => {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
    },
  };
};
