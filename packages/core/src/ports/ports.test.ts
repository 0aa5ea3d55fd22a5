import { describe, expect, it } from 'vitest';
import { systemClock } from './clock.js';
import { RUN_ID_PATTERN, sequentialIdGenerator, uuidv7, uuidv7Generator } from './id-generator.js';

describe('uuidv7', () => {
  it('is a version 7, variant 1 UUID that matches the run id pattern', () => {
    const id = uuidv7(1_700_000_000_000);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(id).toMatch(RUN_ID_PATTERN);
  });

  it('puts the millisecond timestamp first, so ids sort by creation time', () => {
    const ids = [1, 2, 1000, 1_700_000_000_000].map((ms) => uuidv7(ms));
    expect([...ids].sort()).toEqual(ids);
    expect(uuidv7(0x0123456789ab).replace(/-/g, '').slice(0, 12)).toBe('0123456789ab');
  });

  it('differs between two ids of the same millisecond', () => {
    const gen = uuidv7Generator(() => 5);
    expect(gen.newRunId()).not.toBe(gen.newRunId());
  });
});

describe('sequentialIdGenerator', () => {
  it('counts run-0001, run-0002, ...', () => {
    const g = sequentialIdGenerator();
    expect([g.newRunId(), g.newRunId()]).toEqual(['run-0001', 'run-0002']);
  });
});

describe('systemClock.sleep', () => {
  it('rejects with the abort reason when aborted before it elapses', async () => {
    const ac = new AbortController();
    const p = systemClock.sleep(60_000, ac.signal);
    ac.abort(new Error('stopped'));
    await expect(p).rejects.toThrow('stopped');
  });

  it('rejects at once for a signal that is already aborted', async () => {
    await expect(systemClock.sleep(10, AbortSignal.abort(new Error('early')))).rejects.toThrow(
      'early',
    );
  });

  it('resolves after a zero wait', async () => {
    await expect(systemClock.sleep(0)).resolves.toBeUndefined();
  });
});
