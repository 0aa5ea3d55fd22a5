import { describe, expect, it } from 'vitest';
import type {
  CoordinatorClient,
  LogAck,
  LogChunk,
  StatusAck,
  StatusReport,
} from '@trellis/coordinator';
import { systemClock } from '@trellis/core';
import { Outbox } from './outbox.js';

type Sent = { kind: 'status'; seq: number; run: string } | { kind: 'logs'; data: string[] };

/** A coordinator client that records calls and can be "away" (UNAVAILABLE). */
const fakeClient = () => {
  const sent: Sent[] = [];
  const state = { away: false, dropped: new Set<string>() };
  const unavailable = (): Error =>
    Object.assign(new Error('away'), { code: 14 /* gRPC UNAVAILABLE */ });
  const client = {
    report: (r: StatusReport): Promise<StatusAck> => {
      if (state.away) return Promise.reject(unavailable());
      sent.push({ kind: 'status', seq: r.seq, run: r.run?.dagRunId ?? '' });
      return Promise.resolve({
        appliedSeq: r.seq,
        dropped: state.dropped.has(r.run?.dagRunId ?? ''),
      });
    },
    sendLogs: (chunks: readonly LogChunk[]): Promise<LogAck> => {
      if (state.away) return Promise.reject(unavailable());
      sent.push({ kind: 'logs', data: chunks.map((c) => c.data.toString()) });
      return Promise.resolve({ files: [] });
    },
  } as unknown as CoordinatorClient;
  return { client, sent, state };
};

const report = (run: string, seq: number): StatusReport => ({
  workerId: 'w',
  run: { name: 'd', dagRunId: run },
  root: { name: 'd', dagRunId: run },
  seq,
  recordJson: '{}',
  snapshotJson: '',
});
const chunk = (run: string, offset: number, data: string): LogChunk => ({
  workerId: 'w',
  run: { name: 'd', dagRunId: run },
  root: { name: 'd', dagRunId: run },
  path: `/logs/${run}.out`,
  offset,
  data: Buffer.from(data),
});

describe('worker outbox', () => {
  it('delivers a run’s log lines before the status report queued after them', async () => {
    const { client, sent } = fakeClient();
    const box = new Outbox({
      client: () => client,
      clock: systemClock,
      warn: () => undefined,
      onDropped: () => undefined,
    });
    box.log('r1', chunk('r1', 0, 'a\n'));
    box.log('r1', chunk('r1', 2, 'b\n'));
    box.status('r1', report('r1', 1));
    await box.drained();
    // The first chunk leaves at once; the second joins no batch in flight.
    expect(sent).toEqual([
      { kind: 'logs', data: ['a\n'] },
      { kind: 'logs', data: ['b\n'] },
      { kind: 'status', seq: 1, run: 'r1' },
    ]);
  });

  it('keeps everything while the coordinator is away and delivers it in order after', async () => {
    const { client, sent, state } = fakeClient();
    const connectivity: boolean[] = [];
    const box = new Outbox({
      client: () => client,
      clock: systemClock,
      warn: () => undefined,
      onDropped: () => undefined,
      onConnectivity: (up) => connectivity.push(up),
    });
    state.away = true;
    box.log('r1', chunk('r1', 0, 'one\n'));
    box.status('r1', report('r1', 1));
    box.log('r1', chunk('r1', 4, 'two\n'));
    box.status('r1', report('r1', 2));
    expect(box.size).toBe(4);
    state.away = false;
    await box.drained();
    // Every log byte in order; report 1 is replaced by report 2 (each is the whole record),
    // which goes after the lines queued before it.
    expect(sent).toEqual([
      { kind: 'logs', data: ['one\n'] },
      { kind: 'logs', data: ['two\n'] },
      { kind: 'status', seq: 2, run: 'r1' },
    ]);
    expect(connectivity).toEqual([false, true]);
  });

  it('sends only the last of consecutive status reports (each is the whole record)', async () => {
    const { client, sent, state } = fakeClient();
    const box = new Outbox({
      client: () => client,
      clock: systemClock,
      warn: () => undefined,
      onDropped: () => undefined,
    });
    state.away = true;
    box.status('r1', report('r1', 1));
    box.status('r1', report('r1', 2));
    box.status('r1', report('r1', 3));
    state.away = false;
    await box.drained();
    expect(sent).toEqual([{ kind: 'status', seq: 3, run: 'r1' }]);
  });

  it('tells the worker to drop a run the coordinator no longer gives it, and discards the rest', async () => {
    const { client, sent, state } = fakeClient();
    const dropped: string[] = [];
    const box = new Outbox({
      client: () => client,
      clock: systemClock,
      warn: () => undefined,
      onDropped: (k) => dropped.push(k),
    });
    state.dropped.add('r1');
    box.status('r1', report('r1', 1));
    await box.drained();
    expect(dropped).toEqual(['r1']);
    expect(sent).toHaveLength(1);
  });
});
