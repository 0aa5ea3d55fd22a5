import { describe, expect, it } from 'vitest';
import { LoopStalls } from './loop-stalls.js';

/** A LoopStalls on a clock the test sets, ticked by hand. */
const stalls = (): { s: LoopStalls; tickAt: (t: number) => void } => {
  let now = 0;
  let tick: () => void = () => undefined;
  const s = new LoopStalls({ now: () => now, every: (t) => (tick = t) });
  return { s, tickAt: (t) => ((now = t), tick()) };
};

describe('LoopStalls', () => {
  it('counts all of a span as run while the ticks came on time', () => {
    const { s, tickAt } = stalls();
    for (let t = 250; t <= 6000; t += 250) tickAt(t);
    expect(s.ranWithin(500, 5900)).toBe(5400);
  });

  it('leaves out of a span the gap of a freeze, even one that began before it', () => {
    const { s, tickAt } = stalls();
    tickAt(250);
    tickAt(500);
    tickAt(6500); // frozen from 500 to 6500
    tickAt(6750);
    // a connect waited from 400 to 6600: it ran 100 ms before the freeze and 100 after
    expect(s.ranWithin(400, 6600)).toBe(200);
    expect(s.stalledWithin(400, 6600)).toBe(6000);
    // a span inside the freeze ran not at all; one after it, all of it
    expect(s.ranWithin(1000, 2000)).toBe(0);
    expect(s.ranWithin(6500, 6750)).toBe(250);
  });

  it('takes a late tick up to its stall bound for the timer running late, not a stall', () => {
    const { s, tickAt } = stalls();
    tickAt(250);
    tickAt(1200); // 950 ms: a busy loop, not a stall
    expect(s.ranWithin(0, 1200)).toBe(1200);
    expect(s.stalledWithin(0, 1200)).toBe(0);
  });
});
