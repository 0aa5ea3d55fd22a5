import { describe, expect, it } from 'vitest';
import { stopInPhases } from './shutdown-phases.js';

describe('stopInPhases', () => {
  it('runs the phases in order and never calls onLate when they end in time', async () => {
    const order: string[] = [];
    const late: string[] = [];
    await stopInPhases(
      [
        ['a', () => Promise.resolve(void order.push('a'))],
        ['b', () => Promise.resolve(void order.push('b'))],
      ],
      60_000,
      (p) => late.push(p),
    );
    expect(order).toEqual(['a', 'b']);
    expect(late).toEqual([]);
  });

  it('names the phase still running at the deadline', async () => {
    let release = (): void => undefined;
    const hung = new Promise<void>((r) => (release = r));
    const late = new Promise<string>((resolve) => {
      void stopInPhases(
        [
          ['the scheduler', () => Promise.resolve()],
          ['the store', () => hung],
        ],
        20,
        resolve,
      );
    });
    expect(await late).toBe('the store');
    release();
  });

  it('ends with the error of a phase that throws, without running the later ones', async () => {
    const ran: string[] = [];
    await expect(
      stopInPhases(
        [
          ['the runs', () => Promise.reject(new Error('drain failed'))],
          ['the store', () => Promise.resolve(void ran.push('store'))],
        ],
        60_000,
        () => undefined,
      ),
    ).rejects.toThrow('drain failed');
    expect(ran).toEqual([]);
  });
});
