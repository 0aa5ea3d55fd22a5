import { describe, expect, it, vi } from 'vitest';
import { fakeHeap } from '../../test/support/fake-heap.js';
import { DAEMON_TRIM, IdleHeapTrim, tuneDaemonHeap } from './daemon-heap.js';

const MiB = 1024 * 1024;

describe("a daemon's trim (DAEMON_TRIM)", () => {
  /**
   * A burst on a fragmented heap with the daemon's settings: busy until `endMs` (the old
   * generation growing at every check), then idle. The time of each collection, from the
   * burst's end to the check that made it, and whether it compacted.
   */
  const afterBurst = (endMs: number) => {
    const heap = fakeHeap(20 * MiB);
    heap.slackBytes = 20 * MiB;
    const trim = new IdleHeapTrim(heap, DAEMON_TRIM.options);
    const made: [number, boolean][] = [];
    for (let t = DAEMON_TRIM.checkMs; t < endMs + 20_000; t += DAEMON_TRIM.checkMs) {
      if (t <= endMs) heap.set(20 * MiB + t * 1024); // 1 KiB a ms: the burst
      if (trim.check()) made.push([t - endMs, heap.compacted.at(-1) ?? false]);
    }
    return made;
  };

  it("compacts within 1.5 s of a burst's end, whatever the phase of the checks", () => {
    for (let endMs = 10_000; endMs < 10_000 + DAEMON_TRIM.checkMs; endMs += 50) {
      const compactedAt = afterBurst(endMs).find(([, compacted]) => compacted)?.[0];
      expect(compactedAt, `burst ending at ${endMs} ms`).toBeLessThanOrEqual(1500);
    }
  });

  it('waits for 1 s of quiet before the first collection, and settles 6 s after it', () => {
    const made = afterBurst(10_000);
    expect(made.map(([, c]) => c)).toEqual([false, true, false]);
    expect(made[0]![0]).toBeGreaterThanOrEqual(1000);
    expect(made[2]![0] - made[0]![0]).toBe(6000);
  });

  it('is what a daemon runs: its checks come every DAEMON_TRIM.checkMs', () => {
    const every = vi.spyOn(globalThis, 'setInterval');
    try {
      tuneDaemonHeap();
      expect(every.mock.calls.map((c) => c[1])).toEqual([DAEMON_TRIM.checkMs]);
    } finally {
      for (const r of every.mock.results) clearInterval(r.value as NodeJS.Timeout);
      every.mockRestore();
    }
  });

  it('does not collect after one quiet check in a burst', () => {
    const heap = fakeHeap(20 * MiB);
    const trim = new IdleHeapTrim(heap, DAEMON_TRIM.options);
    for (let i = 1; i <= 40; i++) {
      if (i % 2 === 0) heap.set(20 * MiB + i * MiB); // every other check busy
      expect(trim.check()).toBe(false);
    }
  });
});
