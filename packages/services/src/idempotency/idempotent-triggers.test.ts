import { describe, expect, it } from 'vitest';
import { AppError, type Clock } from '@trellis/core';
import type { IdempotencyEntry, IdempotencyJournal } from './idempotency-journal-port.js';
import { IDEMPOTENCY_TTL_MS, IdempotentTriggers, fingerprintOf } from './idempotent-triggers.js';

class MemoryJournal implements IdempotencyJournal {
  readonly entries = new Map<string, IdempotencyEntry>();
  get(key: string) {
    return Promise.resolve(this.entries.get(key));
  }
  put(e: IdempotencyEntry) {
    this.entries.set(e.key, e);
    return Promise.resolve();
  }
  remove(key: string) {
    this.entries.delete(key);
    return Promise.resolve();
  }
}

const setup = () => {
  let nowMs = 0;
  const clock: Clock = { now: () => new Date(nowMs), sleep: () => Promise.resolve() };
  const journal = new MemoryJournal();
  const triggers = new IdempotentTriggers({ journal, clock });
  let n = 0;
  const start = () => Promise.resolve({ name: 'build', dagRunId: `r${++n}` });
  return { journal, triggers, start, advance: (ms: number) => (nowMs += ms) };
};
const req = (payload: unknown) => ({ key: 'k', request: 'POST /dags/build/start', payload });

describe('idempotent triggers', () => {
  it('fingerprints a body whatever the order of its fields and without absent ones', () => {
    expect(fingerprintOf('x', { a: 1, b: [1, { c: 2, d: 3 }] })).toBe(
      fingerprintOf('x', { b: [1, { d: 3, c: 2 }], a: 1, e: undefined }),
    );
    expect(fingerprintOf('x', { a: 1 })).not.toBe(fingerprintOf('y', { a: 1 }));
  });

  it('remembers only a trigger that created a run', async () => {
    const { triggers, start, journal } = setup();
    await expect(triggers.run(req({}), () => Promise.reject(new Error('refused')))).rejects.toThrow(
      'refused',
    );
    expect(journal.entries.size).toBe(0);
    expect(await triggers.run(req({}), start)).toMatchObject({ dagRunId: 'r1', replayed: false });
  });

  it('replays within the TTL, refuses another body, and forgets the key after it', async () => {
    const { triggers, start, advance, journal } = setup();
    await triggers.run(req({ p: 1 }), start);
    advance(IDEMPOTENCY_TTL_MS - 1);
    expect(await triggers.run(req({ p: 1 }), start)).toEqual({ dagRunId: 'r1', replayed: true });
    const refused = await triggers.run(req({ p: 2 }), start).catch((e: unknown) => e);
    expect(AppError.is(refused) && refused.code).toBe('already_exists');
    advance(1);
    expect(await triggers.run(req({ p: 2 }), start)).toMatchObject({ dagRunId: 'r2' });
    expect(journal.entries.get('k')?.dagRunId).toBe('r2');
  });
});
