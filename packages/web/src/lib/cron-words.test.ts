import { describe, expect, it } from 'vitest';
import { cronOf, cronWords } from './cron-words';

describe('cron in words', () => {
  it('says a schedule in words and keeps what it cannot read', () => {
    expect(cronWords('30 2 * * *')).toBe('At 02:30');
    expect(cronWords('*/5 * * * 1-5')).toBe('Every 5 minutes, Monday through Friday');
    expect(cronWords('not a cron')).toBe('not a cron');
    expect(cronOf('CRON_TZ=Asia/Tokyo 30 2 * * *')).toBe('30 2 * * *');
  });
});
