import { describe, expect, it } from 'vitest';
import { AddressRing, parseAddresses, retryWaitMs, SOFT_FAILURES_TO_MOVE } from './address-ring.js';

describe('parseAddresses', () => {
  it('splits a comma-separated list, trimming blanks; one address stays one', () => {
    expect(parseAddresses('a:1, b:2,,[::1]:3')).toEqual(['a:1', 'b:2', '[::1]:3']);
    expect(parseAddresses('127.0.0.1:50055')).toEqual(['127.0.0.1:50055']);
  });

  it('names the bad entry and the form to use', () => {
    expect(() => parseAddresses('a:1,b')).toThrow(/invalid coordinator address "b": use host:port/);
    expect(() => parseAddresses(' , ')).toThrow(/no coordinator address given/);
  });
});

describe('AddressRing', () => {
  it('stays on an address while calls succeed, moves on a hard failure, round and round', () => {
    const ring = new AddressRing(['a:1', 'b:2', 'c:3']);
    ring.succeeded(0);
    expect(ring.address).toBe('a:1');
    expect(ring.failed(0, true)).toBe(true);
    expect(ring.address).toBe('b:2');
    expect(ring.failed(1, true)).toBe(true);
    expect(ring.failed(2, true)).toBe(true);
    expect(ring.address).toBe('a:1');
  });

  it('moves once when many calls on the same address fail together', () => {
    const ring = new AddressRing(['a:1', 'b:2']);
    const index = ring.current;
    expect(ring.failed(index, true)).toBe(true);
    expect(ring.failed(index, true)).toBe(false);
    expect(ring.failed(index, false)).toBe(false);
    expect(ring.address).toBe('b:2');
  });

  it('moves on soft failures (deadlines) only after several in a row; a success resets', () => {
    const ring = new AddressRing(['a:1', 'b:2']);
    for (let i = 1; i < SOFT_FAILURES_TO_MOVE; i++) expect(ring.failed(0, false)).toBe(false);
    ring.succeeded(0);
    for (let i = 1; i < SOFT_FAILURES_TO_MOVE; i++) expect(ring.failed(0, false)).toBe(false);
    expect(ring.failed(0, false)).toBe(true);
    expect(ring.address).toBe('b:2');
  });

  it('never moves with one address', () => {
    const ring = new AddressRing(['a:1']);
    expect(ring.failed(0, true)).toBe(false);
    expect(ring.address).toBe('a:1');
    expect(ring.allFailed).toBe(true);
  });
});

describe('retryWaitMs (the heartbeat back-off)', () => {
  it('asks the next coordinator at once, then backs off doubling to 4x once all failed', () => {
    const ring = new AddressRing(['a:1', 'b:2']);
    // a lost: the move to b is tried at once
    const moved = ring.failed(0, true);
    let wait = retryWaitMs(ring, moved, 1000, 1000);
    expect(wait).toBe(0);
    // b lost too: every address failed in this round, so back off
    wait = retryWaitMs(ring, ring.failed(1, true), wait, 1000);
    expect(wait).toBe(1000);
    wait = retryWaitMs(ring, ring.failed(0, true), wait, 1000);
    expect(wait).toBe(2000);
    wait = retryWaitMs(ring, ring.failed(1, true), wait, 1000);
    expect(wait).toBe(4000);
    wait = retryWaitMs(ring, ring.failed(0, true), wait, 1000);
    expect(wait).toBe(4000);
    // one answers: the next loss moves on at once again
    ring.succeeded(ring.current);
    expect(retryWaitMs(ring, ring.failed(ring.current, true), 4000, 1000)).toBe(0);
  });

  it('with one address backs off as before (1 s, 2 s, 4 s, 4 s)', () => {
    const ring = new AddressRing(['a:1']);
    const waits: number[] = [];
    let wait = 0;
    for (let i = 0; i < 4; i++)
      waits.push((wait = retryWaitMs(ring, ring.failed(0, true), wait, 1000)));
    expect(waits).toEqual([1000, 2000, 4000, 4000]);
  });
});
