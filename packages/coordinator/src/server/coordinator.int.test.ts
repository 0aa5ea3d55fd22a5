import * as grpc from '@grpc/grpc-js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '@trellis/core';
import type { DagRunRecord } from '@trellis/spec';
import { FsRunStore } from '@trellis/store';
import { FakeClock } from '@trellis/testkit';
import { CoordinatorClient } from '../client/coordinator-client.js';
import { Coordinator } from './coordinator.js';
import type { CoordinatorStore } from './coordinator-store.js';

/** A real gRPC coordinator on port 0 over a file store in a temp dir; a FakeClock drives health. */
let home: string;
let clock: FakeClock;
let store: FsRunStore;
let coordinator: Coordinator;
let client: CoordinatorClient;
let updates: DagRunRecord[];
/** Saves and reads of the coordinator's store that fail next ("disk full"), set by a test. */
const failing = { saves: 0, reads: 0 };

/** `call()`, or a "disk full" failure while `failing[kind]` says so. */
const unlessFailing = <T>(kind: keyof typeof failing, call: () => Promise<T>): Promise<T> => {
  if (failing[kind] === 0) return call();
  failing[kind]--;
  return Promise.reject(new Error('disk full'));
};

/** The real store behind the coordinator, with saves and reads that fail on demand. */
const flaky = (real: FsRunStore): CoordinatorStore => ({
  getRun: (r, o) => unlessFailing('reads', () => real.getRun(r, o)),
  saveRun: (rec) => unlessFailing('saves', () => real.saveRun(rec)),
  saveRunIf: (rec, expect) => unlessFailing('saves', () => real.saveRunIf(rec, expect)),
  createRun: (rec, snap) => real.createRun(rec, snap),
  listRuns: (f) => real.listRuns(f),
  watchStop: (r, o, on) => real.watchStop(r, o, on),
});

const ref = { name: 'job', dagRunId: 'r1' };

const record = (): DagRunRecord => ({
  name: 'job',
  dagRunId: 'r1',
  root: ref,
  status: 5,
  createdAt: '2026-01-02T03:04:05.000Z',
  queuedAt: '2026-01-02T03:04:05.000Z',
  startedAt: '',
  finishedAt: '',
  log: store.runLogPath(ref),
  params: [],
  nodes: [],
  preconditions: [],
  error: '',
  queue: 'job',
  revision: 0,
});

const beat = (id: string) =>
  client.heartbeat({
    workerId: id,
    labels: { gpu: 'true' },
    capacity: 1,
    runningTasks: [],
    incarnation: 'i1',
    accepting: true,
  });

const claim = (workerId: string) =>
  client.claim({ workerId, run: ref, root: ref, host: hostname(), pid: 1, processStart: '' });

beforeEach(async () => {
  home = mkdtempSync(join(tmpdir(), 'trellis-coord-'));
  clock = new FakeClock(Date.now());
  store = new FsRunStore({ dataDir: join(home, 'data'), logDir: join(home, 'logs'), clock });
  updates = [];
  failing.saves = 0;
  failing.reads = 0;
  coordinator = new Coordinator({
    store: flaky(store),
    clock,
    logDir: join(home, 'logs'),
    port: 0,
    onRunUpdate: (r) => updates.push(structuredClone(r)),
  });
  await coordinator.start();
  // The client's deadlines use the real clock (the fake one stands still).
  client = new CoordinatorClient({ address: `127.0.0.1:${coordinator.port}`, clock: systemClock });
  await store.createRun(record(), { dag: { name: 'job' }, localDags: [] });
});

afterEach(async () => {
  client.close();
  await coordinator.stop();
  rmSync(home, { recursive: true, force: true });
});

describe('coordinator over real gRPC', () => {
  it('answers heartbeats on one stream in order, and a broken stream is replaced by the next beat', async () => {
    const replies = await Promise.all(['w1', 'w2', 'w3'].map((id) => beat(id)));
    expect(replies.map((r) => r.logDir)).toEqual([0, 1, 2].map(() => join(home, 'logs')));
    expect(coordinator.workers().map((w) => w.id)).toEqual(['w1', 'w2', 'w3']);
    // A bad request ends the stream with an error status...
    await expect(beat('')).rejects.toMatchObject({ details: expect.stringMatching(/worker_id/) });
    // ...and the next heartbeat opens a new one.
    await expect(beat('w4')).resolves.toMatchObject({ logDir: join(home, 'logs') });
    expect(coordinator.workers().map((w) => w.id)).toContain('w4');
  });

  it('fails a heartbeat the coordinator does not answer in time, and recovers once it is back', async () => {
    await beat('w1');
    const port = coordinator.port;
    await coordinator.stop();
    const quick = new CoordinatorClient({
      address: `127.0.0.1:${port}`,
      clock: systemClock,
      callTimeoutMs: 300,
    });
    try {
      await expect(
        quick.heartbeat({
          workerId: 'w1',
          labels: {},
          capacity: 1,
          runningTasks: [],
          incarnation: 'i1',
          accepting: true,
        }),
      ).rejects.toMatchObject({ code: expect.any(Number) });
    } finally {
      quick.close();
    }
    coordinator = new Coordinator({ store, clock, logDir: join(home, 'logs'), port });
    await coordinator.start();
    await expect(beat('w1')).resolves.toMatchObject({ logDir: join(home, 'logs') });
  });

  it('derives worker health from heartbeat age', async () => {
    await beat('w1');
    expect(coordinator.workers()[0]).toMatchObject({ id: 'w1', health: 'healthy' });
    clock.jumpTo(new Date(clock.now().getTime() + 6_000).toISOString());
    expect(coordinator.workers()[0]!.health).toBe('warning');
    clock.jumpTo(new Date(clock.now().getTime() + 10_000).toISOString());
    expect(coordinator.workers()[0]!.health).toBe('unhealthy');
  });

  it('answers availability from healthy matching workers with a free slot', async () => {
    expect(coordinator.availability({ gpu: 'true' })).toMatch(
      /no healthy worker has labels gpu=true/,
    );
    await beat('w1');
    expect(coordinator.availability({ gpu: 'true' })).toBeNull();
    expect(coordinator.availability({})).toBeNull();
    coordinator.expect(record(), { gpu: 'true' });
    expect(coordinator.availability({ gpu: 'true' })).toMatch(/busy/);
  });

  it('applies status reports once and in order (per-run sequence numbers)', async () => {
    await beat('w1');
    const claimed = await claim('w1');
    expect(claimed.granted).toBe(true);
    const base = JSON.parse(claimed.recordJson) as DagRunRecord;
    const send = (seq: number, status: number, revision: number) =>
      client.report({
        workerId: 'w1',
        run: ref,
        root: ref,
        seq,
        recordJson: JSON.stringify({ ...base, status, revision }),
        snapshotJson: '',
      });
    expect((await send(1, 1, base.revision + 1)).appliedSeq).toBe(1);
    expect((await send(2, 1, base.revision + 2)).appliedSeq).toBe(2);
    // A late duplicate of seq 1 (with other content) is acknowledged and ignored.
    expect(await send(1, 3, base.revision + 1)).toEqual({ appliedSeq: 2, dropped: false });
    expect((await store.getRun(ref)).status).toBe(1);
    expect((await send(3, 4, base.revision + 3)).appliedSeq).toBe(3);
    expect((await store.getRun(ref)).status).toBe(4);
  });

  it('acknowledges a status report only once it is written: a refused one is sent again and the run ends final', async () => {
    await beat('w1');
    const claimed = await claim('w1');
    const final = { ...(JSON.parse(claimed.recordJson) as DagRunRecord), status: 4 };
    final.revision += 1;
    const send = () =>
      client.report({
        workerId: 'w1',
        run: ref,
        root: ref,
        seq: 1,
        recordJson: JSON.stringify(final),
        snapshotJson: '',
      });
    failing.saves = 1;
    await expect(send()).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
    expect((await store.getRun(ref)).status).toBe(1); // the refused report was not written
    await expect(send()).resolves.toEqual({ appliedSeq: 1, dropped: false });
    expect((await store.getRun(ref)).status).toBe(4);
    expect(updates.at(-1)?.status).toBe(4);
    // Ended here: the worker's slot is free again.
    expect(coordinator.availability({ gpu: 'true' })).toBeNull();
  });

  it('answers UNAVAILABLE to a claim whose read or save failed, so the worker sends it again and gets the run', async () => {
    await beat('w1');
    coordinator.expect(record(), { gpu: 'true' });
    failing.reads = 1;
    await expect(claim('w1')).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
    failing.saves = 1;
    await expect(claim('w1')).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
    expect((await store.getRun(ref)).owner).toBeUndefined();
    const again = await claim('w1');
    expect(again.granted).toBe(true);
    expect(await store.getRun(ref)).toMatchObject({ status: 1, owner: { workerId: 'w1' } });
    // A run that is not stored is still refused, not retried.
    const unknown = await client.claim({
      workerId: 'w1',
      run: { name: 'job', dagRunId: 'nope' },
      root: { name: 'job', dagRunId: 'nope' },
      host: hostname(),
      pid: 1,
      processStart: '',
    });
    expect(unknown).toMatchObject({ granted: false, reason: expect.stringMatching(/unknown/) });
  });

  it('ends a run still on its dispatch queue only once its record is written', async () => {
    await beat('w1');
    coordinator.expect(record(), { gpu: 'true' });
    failing.saves = 1;
    await expect(coordinator.finishUnclaimed(ref, 3, 'dequeued')).rejects.toThrow(/disk full/);
    expect((await store.getRun(ref)).status).toBe(5);
    expect(coordinator.availability({ gpu: 'true' })).toMatch(/busy/); // still tracked
    await expect(coordinator.finishUnclaimed(ref, 3, 'dequeued')).resolves.toBe(true);
    expect(await store.getRun(ref)).toMatchObject({ status: 3, error: 'dequeued' });
    expect(coordinator.availability({ gpu: 'true' })).toBeNull();
    expect((await claim('w1')).granted).toBe(false);
  });

  it('reconciles heartbeats: a restarted worker that no longer lists its claimed run loses it; a listed running run of the worker is adopted', async () => {
    const listing = (incarnation: string, ...runs: (typeof ref)[]) =>
      client.heartbeat({
        workerId: 'w1',
        labels: { gpu: 'true' },
        capacity: 2,
        runningTasks: runs.map((r) => ({ run: r, root: r, parent: null, startedAt: '' })),
        incarnation,
        accepting: true,
      });
    await listing('i1');
    await claim('w1');
    const other = { name: 'job', dagRunId: 'r2' };
    await store.createRun(
      {
        ...record(),
        ...other,
        root: other,
        status: 1,
        log: store.runLogPath(other),
        owner: { pid: 1, host: 'h', processStart: '', workerId: 'w1' },
      },
      { dag: { name: 'job' }, localDags: [] },
    );
    await listing('i1', ref, other);
    await coordinator.heartbeatsSettled();
    expect((await store.getRun(ref)).status).toBe(1);
    // The same worker again, restarted: r1 is gone with its old process.
    await listing('i2', other);
    await coordinator.heartbeatsSettled();
    expect(await store.getRun(ref)).toMatchObject({
      status: 2,
      error: 'worker "w1" restarted and no longer runs it (its heartbeats do not list it)',
    });
    expect(updates.at(-1)).toMatchObject({ dagRunId: 'r1', status: 2 });
    // r2, unknown to this coordinator but running on w1 by its record, was adopted.
    const r2 = await store.getRun(other);
    const ack = await client.report({
      workerId: 'w1',
      run: other,
      root: other,
      seq: 1,
      recordJson: JSON.stringify({ ...r2, status: 4, revision: r2.revision + 1 }),
      snapshotJson: '',
    });
    expect(ack).toEqual({ appliedSeq: 1, dropped: false });
    expect((await store.getRun(other)).status).toBe(4);
    expect((await listing('i2', ref)).drop).toEqual([ref]);
  });

  it('writes each log byte once, also when a batch is sent again', async () => {
    await beat('w1');
    await claim('w1');
    const path = join(home, 'logs', 'job', 'r1', 'step.out');
    const chunk = (offset: number, data: string) => ({
      workerId: 'w1',
      run: ref,
      root: ref,
      path,
      offset,
      data: Buffer.from(data),
    });
    await client.sendLogs([chunk(0, 'one\n'), chunk(4, 'two\n')]);
    await client.sendLogs([chunk(4, 'two\n'), chunk(8, 'three\n')]);
    expect(readFileSync(path, 'utf8')).toBe('one\ntwo\nthree\n');
  });

  it('refuses log paths outside its log directory', async () => {
    await expect(
      client.sendLogs([
        {
          workerId: 'w1',
          run: ref,
          root: ref,
          path: '/etc/passwd',
          offset: 0,
          data: Buffer.from('x'),
        },
      ]),
    ).rejects.toMatchObject({ code: 3 });
  });

  it('fails the runs of a worker silent for over 15 s, naming it, and tells it to drop them', async () => {
    await beat('w1');
    await claim('w1');
    clock.jumpTo(new Date(clock.now().getTime() + 15_001).toISOString());
    await coordinator.sweepLostWorkers();
    const failed = await store.getRun(ref);
    expect(failed.status).toBe(2);
    expect(failed.error).toMatch(/^worker "w1" was lost: no heartbeat since .* \(over 15 s\)$/);
    expect(updates.at(-1)?.status).toBe(2);
    const back = await client.heartbeat({
      workerId: 'w1',
      labels: {},
      capacity: 1,
      runningTasks: [{ run: ref, root: ref, parent: null, startedAt: '' }],
      incarnation: 'i1',
      accepting: true,
    });
    expect(back.drop).toEqual([ref]);
  });

  it('adopts runs left running on workers when it restarts', async () => {
    await beat('w1');
    await claim('w1');
    await coordinator.stop();
    coordinator = new Coordinator({ store, clock, logDir: join(home, 'logs'), port: 0 });
    await coordinator.start();
    expect(coordinator.workers().map((w) => w.id)).toEqual(['w1']);
    clock.jumpTo(new Date(clock.now().getTime() + 16_000).toISOString());
    await coordinator.sweepLostWorkers();
    expect((await store.getRun(ref)).error).toMatch(/worker "w1" was lost/);
  });
});
