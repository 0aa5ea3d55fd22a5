import { describe, expect, it } from 'vitest';
import type { DagRunRecord } from '@trellis/spec';
import { FakeClock } from '@trellis/testkit';
import type { RunRecorder } from '../../src/ports/recorder.js';
import { RecordSaver, WINDOW_CAP_MS } from '../../src/run/record-saver.js';

const WINDOW_MS = 50;
const START = '2026-01-01T12:00:00.000Z';
const MINUTES_10 = 10 * 60_000;

/** A saver whose saves run `during` (a clock jump) while they are written. */
const saverWith = (clock: FakeClock, during: () => void) => {
  const saved: number[] = [];
  const recorder = {
    save: (r: DagRunRecord) => {
      saved.push(r.revision);
      during();
      return Promise.resolve();
    },
  } as unknown as RunRecorder;
  const record = { revision: 0 } as DagRunRecord;
  const saver = new RecordSaver(record, { recorder, clock, windowMs: WINDOW_MS, log: () => {} });
  return { saver, saved };
};

describe('RecordSaver window under wall-clock steps (a clock is not a stopwatch)', () => {
  it('saves within the cap after a save the clock jumped forward during', async () => {
    const clock = new FakeClock(START);
    let jump = true;
    const { saver, saved } = saverWith(clock, () => {
      if (jump) clock.jumpTo(new Date(clock.now().getTime() + MINUTES_10).toISOString());
      jump = false;
    });
    await saver.persistNow(); // "took" 10 minutes: a 40-minute window unclamped
    saver.persist();
    await new Promise((resolve) => setImmediate(resolve)); // the turn a persist waits for
    await clock.advanceBy(WINDOW_CAP_MS);
    expect(saved).toEqual([1, 2]);
  });

  it('waits at most the window after the clock stepped back', async () => {
    const clock = new FakeClock(START);
    const { saver, saved } = saverWith(clock, () => undefined);
    await saver.persistNow();
    clock.jumpTo(new Date(Date.parse(START) - MINUTES_10).toISOString());
    saver.persist();
    expect(await clock.nextSleep()).toBeLessThanOrEqual(WINDOW_MS);
    await clock.advanceBy(WINDOW_MS);
    expect(saved).toEqual([1, 2]);
  });

  it('saves a change made during a persistNow at once after it, not a window later', async () => {
    const clock = new FakeClock(START); // stands still: a window never ends by itself
    const ref: { saver?: RecordSaver } = {};
    let later = true;
    const made = saverWith(clock, () => {
      if (later) ref.saver?.persist(); // a change during the urgent save
      later = false;
    });
    ref.saver = made.saver;
    let resolved = false;
    void made.saver.persistNow().then(() => (resolved = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(made.saved).toEqual([1, 2]);
    expect(resolved).toBe(true);
    expect(clock.sleeps).toEqual([]);
  });
});
