import { describe, expect, it } from 'vitest';
import { RunStatus } from '@trellis/core';
import { isExpired } from './retention.js';

const cutoff = Date.parse('2026-01-10T00:00:00Z');
const run = (status: RunStatus, finishedAt: string, createdAt = '2026-01-01T00:00:00Z') => ({
  status,
  finishedAt,
  createdAt,
});

describe('isExpired', () => {
  it('expires a finished, failed, cancelled or partially successful run that ended before the cutoff', () => {
    for (const s of [
      RunStatus.Succeeded,
      RunStatus.Failed,
      RunStatus.Cancelled,
      RunStatus.PartiallySucceeded,
    ])
      expect(isExpired(run(s, '2026-01-09T23:59:59Z'), cutoff)).toBe(true);
  });

  it('keeps a run that ended at or after the cutoff', () => {
    expect(isExpired(run(RunStatus.Succeeded, '2026-01-10T00:00:00Z'), cutoff)).toBe(false);
  });

  it('never expires a running or queued run, however old', () => {
    expect(isExpired(run(RunStatus.Running, ''), cutoff)).toBe(false);
    expect(isExpired(run(RunStatus.Queued, ''), cutoff)).toBe(false);
  });

  it('judges a run that never started by its creation time', () => {
    expect(isExpired(run(RunStatus.NotStarted, ''), cutoff)).toBe(true);
    expect(isExpired(run(RunStatus.NotStarted, '', '2026-01-11T00:00:00Z'), cutoff)).toBe(false);
  });

  it('keeps a run whose timestamp cannot be read', () => {
    expect(isExpired(run(RunStatus.Failed, 'yesterday'), cutoff)).toBe(false);
  });
});
