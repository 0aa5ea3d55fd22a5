import { describe, expect, it } from 'vitest';
import { AppError, ErrorCode, notFound } from '@trellis/core';
import type { DagRunRecord, RunRef } from '@trellis/spec';
import { RunReads, type RunReadStore } from './run-reads.js';

const summary = (dagRunId: string) => ({ name: 'd', dagRunId });
const record = (dagRunId: string) => ({ name: 'd', dagRunId }) as unknown as DagRunRecord;

/** A store listing runs a, b and c, whose `getRun` answers as `read` says. */
const storeOf = (read: (ref: RunRef) => Promise<DagRunRecord>): RunReadStore =>
  ({
    listRuns: () => Promise.resolve(['a', 'b', 'c'].map(summary)),
    getRun: read,
  }) as unknown as RunReadStore;

describe('RunReads.recent (the run history grid)', () => {
  it('leaves out a run deleted between the listing and its read', async () => {
    const reads = new RunReads(
      storeOf((ref) =>
        ref.dagRunId === 'b'
          ? Promise.reject(notFound('run', 'd/b'))
          : Promise.resolve(record(ref.dagRunId)),
      ),
    );
    const runs = await reads.recent('d', 30);
    expect(runs.map((r) => r.dagRunId)).toEqual(['a', 'c']);
  });

  it('still fails on any other error of a read', async () => {
    const broken = new AppError(ErrorCode.ServiceUnavailable, 'the store is away');
    const reads = new RunReads(storeOf(() => Promise.reject(broken)));
    await expect(reads.recent('d', 30)).rejects.toBe(broken);
  });
});
