import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunStatus, systemClock } from '@trellis/core';
import type { DagRunRecord, RunRef } from '@trellis/spec';
import { FsRunStore } from '@trellis/store';
import { FakeClock, makeRecord } from '@trellis/testkit';
import { CoordinatorClient } from '../client/coordinator-client.js';
import { Feature } from '../wire/protocol.js';
import { Coordinator } from './coordinator.js';

/**
 * The final leg of the worker path over real gRPC and a real file store (issue 21, item 4): a
 * run's last lines carried in its final report, and reports swapped in without a read.
 */
let home: string;
let store: FsRunStore;
let coordinator: Coordinator;
let client: CoordinatorClient;
let updates: DagRunRecord[];
/** Reads of a run record the coordinator made. */
let reads: number;

const jobRef = (dagRunId: string): RunRef => ({ name: 'job', dagRunId });

const queued = (dagRunId: string): DagRunRecord =>
  makeRecord({
    name: 'job',
    dagRunId,
    status: RunStatus.Queued,
    queuedAt: '2026-01-02T03:04:05.000Z',
    log: store.runLogPath(jobRef(dagRunId)),
  });

/** Run `dagRunId` created queued and claimed by worker w1: the record as granted. */
const claimed = async (dagRunId: string): Promise<DagRunRecord> => {
  await store.createRun(queued(dagRunId), { dag: { name: 'job' }, localDags: [] });
  const ref = jobRef(dagRunId);
  const res = await client.claim({
    workerId: 'w1',
    run: ref,
    root: ref,
    host: hostname(),
    pid: 1,
    processStart: '',
  });
  expect(res.granted).toBe(true);
  return JSON.parse(res.recordJson) as DagRunRecord;
};

const chunk = (dagRunId: string, offset: number, data: string) => ({
  workerId: 'w1',
  run: jobRef(dagRunId),
  root: jobRef(dagRunId),
  path: join(home, 'logs', 'job', dagRunId, 'run.log'),
  offset,
  data: Buffer.from(data),
});

const finalReport = (rec: DagRunRecord, seq: number, status: RunStatus = RunStatus.Succeeded) => ({
  workerId: 'w1',
  run: jobRef(rec.dagRunId),
  root: jobRef(rec.dagRunId),
  seq,
  recordJson: JSON.stringify({ ...rec, status, revision: rec.revision + seq }),
  snapshotJson: '',
});

beforeEach(async () => {
  home = mkdtempSync(join(tmpdir(), 'trellis-report-path-'));
  const clock = new FakeClock(Date.now());
  store = new FsRunStore({ dataDir: join(home, 'data'), logDir: join(home, 'logs'), clock });
  updates = [];
  reads = 0;
  coordinator = new Coordinator({
    store: {
      getRun: (r, o) => {
        reads++;
        return store.getRun(r, o);
      },
      saveRun: (rec) => store.saveRun(rec),
      saveRunIf: (rec, expect) => store.saveRunIf(rec, expect),
      createRun: (rec, snap) => store.createRun(rec, snap),
      listRuns: (f) => store.listRuns(f),
      watchStop: (r, o, on) => store.watchStop(r, o, on),
    },
    clock,
    logDir: join(home, 'logs'),
    port: 0,
    onRunUpdate: (r) => updates.push(structuredClone(r)),
  });
  await coordinator.start();
  client = new CoordinatorClient({ address: `127.0.0.1:${coordinator.port}`, clock: systemClock });
  await client.heartbeat({
    workerId: 'w1',
    labels: {},
    capacity: 4,
    runningTasks: [],
    incarnation: 'i1',
    accepting: true,
  });
});

afterEach(async () => {
  client.close();
  await coordinator.stop();
  rmSync(home, { recursive: true, force: true });
});

describe('the final report of a run on a worker', () => {
  it('stores the last lines it carries once, in order, with the final status; an older worker streaming them first gets the same', async () => {
    expect(client.takes(Feature.ReportLogs)).toBe(true); // named in the heartbeat reply
    const r1 = await claimed('r1');
    const carried = {
      ...finalReport(r1, 1),
      logs: [chunk('r1', 0, 'one\n'), chunk('r1', 4, 'two\n')],
    };
    await expect(client.report(carried)).resolves.toMatchObject({
      appliedSeq: 1,
      dropped: false,
      logsApplied: true,
    });
    // its answer lost: the worker sends it again, with a line more of the same file
    const again = { ...carried, logs: [...carried.logs, chunk('r1', 8, 'three\n')] };
    await expect(client.report(again)).resolves.toMatchObject({ logsApplied: true });
    expect(readFileSync(chunk('r1', 0, '').path, 'utf8')).toBe('one\ntwo\nthree\n');
    expect((await store.getRun(jobRef('r1'))).status).toBe(RunStatus.Succeeded);

    // a worker of the previous version: its lines on a stream, then the report without them
    const r2 = await claimed('r2');
    await client.sendLogs([chunk('r2', 0, 'one\n'), chunk('r2', 4, 'two\n')]);
    const ack = await client.report(finalReport(r2, 1));
    expect(ack).toEqual({ appliedSeq: 1, dropped: false }); // no logsApplied: none carried
    expect(readFileSync(chunk('r2', 0, '').path, 'utf8')).toBe('one\ntwo\n');
    expect((await store.getRun(jobRef('r2'))).status).toBe(RunStatus.Succeeded);
    expect(updates.filter((u) => u.status === RunStatus.Succeeded).map((u) => u.dagRunId)).toEqual([
      'r1',
      'r2',
    ]);
  });

  it('is swapped in against the revision of the claim without a read, and still refused once a lost-run failure from another process overtook it', async () => {
    const r1 = await claimed('r1');
    const before = reads;
    await expect(client.report(finalReport(r1, 1))).resolves.toEqual({
      appliedSeq: 1,
      dropped: false,
    });
    expect(reads).toBe(before); // the claim's revision was enough
    expect((await store.getRun(jobRef('r1'))).status).toBe(RunStatus.Succeeded);

    // r2: another coordinator on the same home marks it failed (its worker was lost there)
    const r2 = await claimed('r2');
    const other = new FsRunStore({
      dataDir: join(home, 'data'),
      logDir: join(home, 'logs'),
      clock: systemClock,
    });
    const failed = { ...r2, status: RunStatus.Failed, error: 'lost', revision: r2.revision + 1000 };
    await other.saveRun(failed);
    const running = finalReport(r2, 1, RunStatus.Running);
    await expect(client.report(running)).resolves.toEqual({ appliedSeq: 1, dropped: true });
    // its final report too changes nothing (the run ended there)
    await expect(client.report(finalReport(r2, 2))).resolves.toMatchObject({ appliedSeq: 2 });
    expect(await store.getRun(jobRef('r2'))).toMatchObject({
      status: RunStatus.Failed,
      error: 'lost',
      revision: failed.revision,
    });
    expect(updates.filter((u) => u.dagRunId === 'r2').map((u) => u.status)).toEqual([
      RunStatus.Running, // the claim
    ]);
  });
});
