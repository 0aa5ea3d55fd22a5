import type { ApiRunDetails } from '@trellis/contract';
import { describe, expect, it } from 'vitest';
import type { RunSource } from './run-source.js';
import { POLL_PAUSE_MS, waitForFinal, type WaitClock } from './wait-final.js';

/** A fake clock: `sleep` advances it; `asks` records each details call's waitSec and time. */
const fakeClock = (): WaitClock & { t: number; sleeps: number[] } => {
  const c = {
    t: 0,
    sleeps: [] as number[],
    now: () => c.t,
    sleep: (ms: number) => {
      c.sleeps.push(ms);
      c.t += ms;
      return Promise.resolve();
    },
  };
  return c;
};

const run = (status: number): ApiRunDetails => ({ status }) as ApiRunDetails;

/** A server whose details are `statuses` in turn; `holds` says whether it long-polls. */
const server = (
  clock: { t: number },
  statuses: number[],
  holds: boolean,
): RunSource & { asks: (number | undefined)[] } => {
  const asks: (number | undefined)[] = [];
  return {
    asks,
    details: (_ref, waitSec) => {
      asks.push(waitSec);
      const s = statuses.shift() ?? 1;
      // a long-polling server answers a run that stays running after the timeout
      if (holds && s === 1 && waitSec !== undefined) clock.t += waitSec * 1000;
      return Promise.resolve(run(s));
    },
    stepLog: () => Promise.resolve(undefined),
  };
};

const ref = { name: 'etl', dagRunId: 'r1' };

describe('waitForFinal', () => {
  it('asks with waitFor=final for 30 s at a time and never pauses for a long-polling server', async () => {
    const clock = fakeClock();
    const src = server(clock, [1, 1, 4], true);
    const out = await waitForFinal(src, ref, { clock });
    expect(out).toEqual({ details: run(4), timedOut: false });
    expect(src.asks).toEqual([30, 30, 30]);
    expect(clock.sleeps).toEqual([]);
  });

  it('pauses 250 ms between asks when the server answers at once (no long-poll)', async () => {
    const clock = fakeClock();
    const src = server(clock, [5, 1, 1, 2], false);
    const out = await waitForFinal(src, ref, { clock });
    expect(out.details.status).toBe(2);
    expect(clock.sleeps).toEqual([POLL_PAUSE_MS, POLL_PAUSE_MS, POLL_PAUSE_MS]);
  });

  it('times out with the last state, asking no longer than the time left', async () => {
    const clock = fakeClock();
    const src = server(clock, [], true);
    const out = await waitForFinal(src, ref, { clock, timeoutMs: 45_000 });
    expect(out).toEqual({ details: run(1), timedOut: true });
    expect(src.asks).toEqual([30, 15]);
    expect(clock.t).toBe(45_000);
  });
});
