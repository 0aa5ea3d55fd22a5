import { describe, expect, it } from 'vitest';
import { isValidTimeZone, parseScheduleExpression } from './schedule.js';

describe('parseScheduleExpression', () => {
  it('accepts five cron fields and keeps the expression as written', () => {
    expect(parseScheduleExpression('*/15 9-17 * * 1-5')).toEqual({
      expression: '*/15 9-17 * * 1-5',
      cron: '*/15 9-17 * * 1-5',
    });
  });

  it('trims surrounding spaces', () => {
    expect(parseScheduleExpression('  0 2 * * *  ')).toEqual({
      expression: '0 2 * * *',
      cron: '0 2 * * *',
    });
  });

  it('takes the time zone from a CRON_TZ= or TZ= prefix', () => {
    expect(parseScheduleExpression('CRON_TZ=Europe/Berlin 0 9 * * *')).toEqual({
      expression: 'CRON_TZ=Europe/Berlin 0 9 * * *',
      cron: '0 9 * * *',
      timezone: 'Europe/Berlin',
    });
    expect(parseScheduleExpression('TZ=Asia/Tokyo 30 6 * * 1')).toEqual({
      expression: 'TZ=Asia/Tokyo 30 6 * * 1',
      cron: '30 6 * * 1',
      timezone: 'Asia/Tokyo',
    });
  });

  it('accepts @daily-style descriptors, with or without a time zone', () => {
    for (const d of [
      '@yearly',
      '@annually',
      '@monthly',
      '@weekly',
      '@daily',
      '@midnight',
      '@hourly',
    ])
      expect(parseScheduleExpression(d)).toEqual({ expression: d, cron: d });
    expect(parseScheduleExpression('CRON_TZ=UTC @daily')).toEqual({
      expression: 'CRON_TZ=UTC @daily',
      cron: '@daily',
      timezone: 'UTC',
    });
  });

  it('accepts month and weekday names, lists, steps, 7 for Sunday and the L/W/# forms', () => {
    for (const c of [
      '0 9 * JAN-MAR MON-FRI',
      '0,30 */2 1,15 * *',
      '0 0 * * 7',
      '0 0 L * *',
      '0 0 15W * *',
      '0 0 * * 5#2',
      '0 0 ? * *',
    ])
      expect(parseScheduleExpression(c)).toEqual({ expression: c, cron: c });
  });

  it('rejects six fields, naming the five expected', () => {
    expect(parseScheduleExpression('0 0 2 * * *')).toMatch(
      /^invalid cron expression "0 0 2 \* \* \*": use five fields \(minute hour day-of-month month day-of-week\)/,
    );
  });

  it('names the field and the value as written when a value is out of range', () => {
    expect(parseScheduleExpression('61 * * * *')).toBe(
      'invalid cron expression "61 * * * *": minute 61 is out of range 0-59',
    );
    expect(parseScheduleExpression('0 24 * * *')).toBe(
      'invalid cron expression "0 24 * * *": hour 24 is out of range 0-23',
    );
    expect(parseScheduleExpression('0 0 0 * *')).toBe(
      'invalid cron expression "0 0 0 * *": day-of-month 0 is out of range 1-31',
    );
    expect(parseScheduleExpression('0 0 32 * *')).toBe(
      'invalid cron expression "0 0 32 * *": day-of-month 32 is out of range 1-31',
    );
    expect(parseScheduleExpression('0 0 1 13 *')).toBe(
      'invalid cron expression "0 0 1 13 *": month 13 is out of range 1-12',
    );
    expect(parseScheduleExpression('0 0 * * 1-8')).toBe(
      'invalid cron expression "0 0 * * 1-8": day-of-week 8 is out of range 0-7',
    );
  });

  it('rejects text that is not a cron value, and zero steps', () => {
    expect(parseScheduleExpression('x * * * *')).toBe(
      'invalid cron expression "x * * * *": minute "x" is not valid: use a number, a range (1-5), a list (1,15) or a step (*/10)',
    );
    expect(parseScheduleExpression('*/0 * * * *')).toBe(
      'invalid cron expression "*/0 * * * *": minute step in "*/0" must be a positive whole number, as in */15',
    );
    expect(parseScheduleExpression('@sometimes')).toMatch(/use five fields/);
  });

  it('rejects an unknown or empty time zone and an empty expression', () => {
    expect(parseScheduleExpression('CRON_TZ=Mars/Base 0 9 * * *')).toBe(
      'unknown time zone "Mars/Base": use an IANA name such as "Europe/Berlin" or "UTC"',
    );
    expect(parseScheduleExpression('TZ= 0 9 * * *')).toMatch(
      /^empty time zone in "TZ= 0 9 \* \* \*"/,
    );
    expect(parseScheduleExpression('')).toBe('empty cron expression');
  });
});

describe('isValidTimeZone', () => {
  it('knows IANA names and UTC, and nothing else', () => {
    expect(isValidTimeZone('Europe/Berlin')).toBe(true);
    expect(isValidTimeZone('UTC')).toBe(true);
    expect(isValidTimeZone('Europe/Atlantis')).toBe(false);
    expect(isValidTimeZone('')).toBe(false);
  });
});
