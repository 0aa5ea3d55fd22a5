import { describe, expect, it } from 'vitest';
import { FakeClock } from '@trellis/testkit';
import { StoreWriteErrors } from './store-write-errors.js';

const enospc = Object.assign(new Error('ENOSPC: no space left on device, write'), {
  code: 'ENOSPC',
});

describe('StoreWriteErrors', () => {
  it('counts by kind, remembers truncated logs only, and reports trouble for 5 minutes after the last failure', async () => {
    const clock = new FakeClock('2026-01-02T03:04:05.000Z');
    const e = new StoreWriteErrors(clock);
    expect(e.problem()).toBeUndefined();
    expect(e.note('log', '/logs/a.out', enospc)).toMatchObject({ code: 'ENOSPC' });
    e.note('record', 'etl/run-1', enospc);
    expect(e.counts()).toEqual({ log: 1, record: 1 });
    expect(e.truncation('/logs/a.out')).toBe(
      'log file /logs/a.out could not be written: ENOSPC: no space left on device, write',
    );
    expect(e.truncation('etl/run-1')).toBeUndefined();
    expect(e.problem()).toContain('run record etl/run-1 could not be written: ENOSPC');
    await clock.advanceBy(5 * 60_000);
    expect(e.problem()).toContain('ENOSPC');
    await clock.advanceBy(1);
    expect(e.problem()).toBeUndefined();
    expect(e.counts()).toEqual({ log: 1, record: 1 }); // the counter never goes down
  });
});
