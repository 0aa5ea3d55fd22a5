import { describe, expect, it } from 'vitest';
import type { ScheduleEntry } from './model/dag.js';
import { parseScheduleExpression } from './normalize/schedule.js';
import { nextRunOf } from './schedule-next.js';

const entries = (...expressions: string[]): ScheduleEntry[] =>
  expressions.map((e) => {
    const r = parseScheduleExpression(e);
    if (typeof r === 'string') throw new Error(r);
    return r;
  });

const at = (iso: string): Date => new Date(iso);

describe('nextRunOf', () => {
  it('is undefined for an empty schedule', () => {
    expect(nextRunOf([], at('2026-01-02T03:04:05Z'))).toBeUndefined();
  });

  it('gives the next fire time strictly after `from`', () => {
    const s = entries('CRON_TZ=UTC 0 9 * * *');
    expect(nextRunOf(s, at('2026-01-02T08:59:59Z'))).toEqual(at('2026-01-02T09:00:00Z'));
    expect(nextRunOf(s, at('2026-01-02T09:00:00Z'))).toEqual(at('2026-01-03T09:00:00Z'));
  });

  it('takes the earliest of several entries', () => {
    const s = entries(
      'CRON_TZ=UTC 0 12 * * *',
      'CRON_TZ=UTC */15 * * * *',
      'CRON_TZ=UTC 0 0 1 1 *',
    );
    expect(nextRunOf(s, at('2026-01-02T03:04:05Z'))).toEqual(at('2026-01-02T03:15:00Z'));
  });

  it('evaluates each entry in its own CRON_TZ zone, daylight saving included', () => {
    // 09:00 in Berlin is 08:00 UTC in winter and 07:00 UTC in summer.
    expect(
      nextRunOf(entries('CRON_TZ=Europe/Berlin 0 9 * * *'), at('2026-01-02T03:00:00Z')),
    ).toEqual(at('2026-01-02T08:00:00Z'));
    expect(nextRunOf(entries('TZ=Europe/Berlin 0 9 * * *'), at('2026-07-02T03:00:00Z'))).toEqual(
      at('2026-07-02T07:00:00Z'),
    );
    // 06:30 in Tokyo (UTC+9) is 21:30 UTC the day before.
    expect(nextRunOf(entries('CRON_TZ=Asia/Tokyo 30 6 * * *'), at('2026-01-02T03:00:00Z'))).toEqual(
      at('2026-01-02T21:30:00Z'),
    );
  });

  it('compares instants across zones', () => {
    const s = entries('CRON_TZ=UTC 0 9 * * *', 'CRON_TZ=Asia/Tokyo 0 9 * * *');
    // 09:00 Tokyo = 00:00 UTC, earlier than 09:00 UTC.
    expect(nextRunOf(s, at('2026-01-01T23:00:00Z'))).toEqual(at('2026-01-02T00:00:00Z'));
  });

  it("uses the server's zone for an entry without a prefix", () => {
    const from = new Date(2026, 0, 2, 8, 0, 0);
    expect(nextRunOf(entries('0 9 * * *'), from)).toEqual(new Date(2026, 0, 2, 9, 0, 0));
  });

  it('accepts descriptors', () => {
    expect(nextRunOf(entries('CRON_TZ=UTC @daily'), at('2026-01-02T03:04:05Z'))).toEqual(
      at('2026-01-03T00:00:00Z'),
    );
  });

  it('ignores an entry that cannot fire instead of throwing', () => {
    const bad: ScheduleEntry = { expression: 'nonsense', cron: 'nonsense' };
    expect(nextRunOf([bad], at('2026-01-02T03:04:05Z'))).toBeUndefined();
    expect(
      nextRunOf([bad, ...entries('CRON_TZ=UTC 0 4 * * *')], at('2026-01-02T03:04:05Z')),
    ).toEqual(at('2026-01-02T04:00:00Z'));
  });
});
