import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { AppError, ErrorCode, RunStatus } from '@trellis/core';
import type { DagRunRecord } from '@trellis/spec';
import {
  claimOf,
  queuedRun,
  record,
  ref,
  report,
  setup,
} from '../../test/support/coordinator-rooms.js';

// A claim saved on the coordinator whose answer never reached the worker (a failed read after
// the save, a late answer past the worker's deadline): the run was owned and never run. Found
// by the HA fault test (runs left running on live workers after a kill -9 under load).

const unavailableStore = (): AppError =>
  new AppError(ErrorCode.ServiceUnavailable, 'timeout exceeded when trying to connect');

describe('a claim saved but not answered', () => {
  it('after a failed read of the run log: answered UNAVAILABLE, granted when the same process asks again', async () => {
    const c = queuedRun();
    let fail = true;
    Object.assign(c.ctx.logs, {
      sizeOf: () =>
        fail ? ((fail = false), Promise.reject(unavailableStore())) : Promise.resolve(7),
    });
    await expect(c.claims.claim(claimOf())).rejects.toMatchObject({
      code: grpc.status.UNAVAILABLE,
    });
    expect(c.store.peek(ref())?.owner?.workerId).toBe('w1'); // the save landed
    expect(await c.claims.claim(claimOf('w1', 2))).toMatchObject({ granted: false });
    const again = await c.claims.claim(claimOf());
    expect(again).toMatchObject({ granted: true, runLogSize: 7 });
    expect(JSON.parse(again.recordJson)).toEqual(c.store.peek(ref()));
    expect(await c.claims.claim(claimOf('w2'))).toMatchObject({ granted: false });
  });

  it('whose answer was lost (past the deadline): granted again to the same process', async () => {
    const c = queuedRun();
    await c.claims.claim(claimOf()); // the answer never reached the worker
    const again = await c.claims.claim(claimOf());
    expect(again.granted).toBe(true);
    // its reports are written (the record handed over is the one stored)
    const given = JSON.parse(again.recordJson) as DagRunRecord;
    await c.reports.report(report(1, { ...given, revision: given.revision + 1, status: 4 }));
    expect(c.store.peek(ref())?.status).toBe(RunStatus.Succeeded);
  });

  it('asked again while the first request still saves: waits for it, then granted without a second write', async () => {
    const c = queuedRun();
    const real = c.store.saveRunIf.bind(c.store);
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    let saves = 0;
    c.store.saveRunIf = async (rec: DagRunRecord, expect: number) => {
      saves += 1;
      await held;
      return real(rec, expect);
    };
    const first = c.claims.claim(claimOf());
    await new Promise((r) => setImmediate(r));
    const second = c.claims.claim(claimOf()); // the first's answer came too late for the worker
    expect(await c.claims.claim(claimOf('w2'))).toMatchObject({ granted: false });
    release();
    expect((await first).granted).toBe(true);
    const again = await second;
    expect(again.granted).toBe(true);
    expect(JSON.parse(again.recordJson)).toEqual(c.store.peek(ref()));
    expect(saves).toBe(1); // granted as stored: the revision its reports follow is not bumped
  });

  it('is not granted again while the worker lists the run as running', async () => {
    const c = queuedRun();
    await c.claims.claim(claimOf());
    await c.beat('w1', [{ ref: ref() }]);
    expect(await c.claims.claim(claimOf())).toMatchObject({ granted: false });
  });
});

describe('the store away while a worker reports or lists a run this coordinator does not track', () => {
  it('answers the report UNAVAILABLE (sent again), not INVALID_ARGUMENT (thrown away)', async () => {
    const c = setup();
    c.store.put(record('r1', RunStatus.Running));
    c.store.getRun = () => Promise.reject(unavailableStore());
    await expect(
      c.reports.report(report(1, record('r1', RunStatus.Succeeded))),
    ).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
  });

  it('does not tell the worker to drop a run it lists', async () => {
    const c = setup();
    c.store.put(record('r1', RunStatus.Running));
    const real = c.store.getRun.bind(c.store);
    c.store.getRun = () => Promise.reject(unavailableStore());
    await c.beat('w1', [{ ref: ref() }]);
    expect(c.warnings.filter((w) => w.includes('drop'))).toEqual([]);
    c.store.getRun = real;
    await c.beat('w1', [{ ref: ref() }]); // the store back: adopted as the worker's
    expect(c.ctx.runs.get(ref(), ref())).toMatchObject({ workerId: 'w1' });
  });
});

describe('a late claim on one coordinator after the worker was granted through another', () => {
  it('writes nothing: the reports of the run the worker runs are still written', async () => {
    const a = queuedRun();
    const b = setup(a.store); // a second coordinator on the same store
    const real = a.store.saveRunIf.bind(a.store);
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    let slow = true;
    a.store.saveRunIf = async (rec: DagRunRecord, expect: number) => {
      if (slow) {
        slow = false;
        await held; // the claim on A saves late; the worker gave up on it and moved to B
      }
      return real(rec, expect);
    };
    const stray = a.claims.claim(claimOf());
    await new Promise((r) => setImmediate(r));
    const granted = await b.claims.claim(claimOf());
    expect(granted.granted).toBe(true);
    const given = JSON.parse(granted.recordJson) as DagRunRecord;
    release();
    await stray; // its save loses the race, and it finds the run its worker's: nothing written
    expect(a.store.peek(ref())?.revision).toBe(given.revision);
    const done = { ...given, revision: given.revision + 1, status: RunStatus.Succeeded };
    await b.reports.report(report(1, done));
    expect(a.store.peek(ref())?.status).toBe(RunStatus.Succeeded);
  });
});
