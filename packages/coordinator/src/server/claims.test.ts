import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { RunStatus } from '@trellis/core';
import type { DagRunRecord } from '@trellis/spec';
import { claimOf, queuedRun, ref, report } from '../../test/support/coordinator-rooms.js';

/** The next claim save of `c` finds the stored record changed once (another write landed). */
const changedBeforeNextSave = (c: ReturnType<typeof queuedRun>): void => {
  const real = c.store.saveRunIf.bind(c.store);
  let changed = false;
  c.store.saveRunIf = (rec: DagRunRecord, expect: number) => {
    if (!changed) {
      changed = true;
      const stored = c.store.peek(ref())!;
      c.store.put({ ...stored, revision: stored.revision + 1 });
    }
    return real(rec, expect);
  };
};

describe('a claim whose first save lost the race to another write', () => {
  it('hands the worker the record as saved by the retry, so its reports are written', async () => {
    const c = queuedRun();
    changedBeforeNextSave(c);
    const claim = await c.claims.claim(claimOf());
    expect(claim.granted).toBe(true);
    const given = JSON.parse(claim.recordJson) as DagRunRecord;
    expect(given).toEqual(c.store.peek(ref()));
    // The worker's first report (its revision one higher) is written, not only acknowledged.
    const running = { ...given, revision: given.revision + 1, status: RunStatus.Succeeded };
    await c.reports.report(report(1, running));
    expect(c.store.peek(ref())?.status).toBe(RunStatus.Succeeded);
  });
});

describe('two claims of one run through one coordinator while the first is retried', () => {
  it("refuse the second, and the run stays tracked as the winner's", async () => {
    const c = queuedRun();
    changedBeforeNextSave(c);
    // The second claim arrives while the first reads the run again after its lost save.
    const realGet = c.store.getRun.bind(c.store);
    let second: ReturnType<typeof c.claims.claim> | undefined;
    let reads = 0;
    c.store.getRun = (r, o) => {
      const p = realGet(r, o);
      if (++reads === 2) second = c.claims.claim(claimOf('w2'));
      return p;
    };
    const first = await c.claims.claim(claimOf('w1'));
    const answers = { w1: first.granted, w2: (await second!).granted };
    expect(answers.w1 !== answers.w2).toBe(true);
    const winner = answers.w1 ? 'w1' : 'w2';
    expect(c.store.peek(ref())?.owner?.workerId).toBe(winner);
    expect(c.ctx.runs.get(ref(), ref())).toMatchObject({ workerId: winner, claiming: undefined });
  });
});

describe('a claim whose save landed but was answered as failed', () => {
  it('is granted when the same worker process sends it again, and refused to another', async () => {
    const c = queuedRun();
    const real = c.store.saveRunIf.bind(c.store);
    let lost = false;
    c.store.saveRunIf = async (rec: DagRunRecord, expect: number) => {
      const saved = await real(rec, expect);
      if (lost) return saved;
      lost = true;
      throw new Error('connection lost before the commit was answered');
    };
    await expect(c.claims.claim(claimOf())).rejects.toMatchObject({
      code: grpc.status.UNAVAILABLE,
    });
    expect(c.store.peek(ref())?.owner?.workerId).toBe('w1');
    // A restarted w1 (another pid) is not the process that asked.
    expect(await c.claims.claim(claimOf('w1', 2))).toMatchObject({ granted: false });
    const again = await c.claims.claim(claimOf());
    expect(again.granted).toBe(true);
    expect(JSON.parse(again.recordJson)).toEqual(c.store.peek(ref()));
    expect(c.ctx.runs.get(ref(), ref())).toMatchObject({ workerId: 'w1' });
  });
});

describe('a claim of a run with a run log (issue 21, the worker path)', () => {
  it("reads the log's size while its save is under way, not after it", async () => {
    const c = queuedRun();
    const real = c.store.saveRunIf.bind(c.store);
    let sizeAsked = false;
    let askedDuringSave: boolean | undefined;
    c.store.saveRunIf = async (rec: DagRunRecord, expect: number) => {
      // the save lets its caller go on (as a real write does), then looks
      await new Promise((resolve) => setImmediate(resolve));
      askedDuringSave = sizeAsked;
      return real(rec, expect);
    };
    Object.assign(c.ctx.logs, {
      sizeOf: (path: string) => {
        sizeAsked = path === '/logs/job/r1/run.log';
        return Promise.resolve(42);
      },
    });
    const claim = await c.claims.claim(claimOf());
    expect(claim).toMatchObject({ granted: true, runLogSize: 42 });
    expect(askedDuringSave).toBe(true);
  });
});
