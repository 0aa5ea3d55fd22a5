import { systemClock, type Clock } from '@trellis/core';
import type { CoordinatorClient, HeartbeatRequest } from '@trellis/coordinator/client';
import { describe, expect, it } from 'vitest';
import { ActiveRuns } from './active-runs.js';
import { CoordinatorLink } from './coordinator-link.js';

const ref = { name: 'd', dagRunId: 'r1' };

/** The system clock, but a turn's wait (`sleep(0)`) ends in the same turn: no timer to await. */
const clock: Clock = {
  ...systemClock,
  sleep: (ms, signal) => (ms === 0 ? Promise.resolve() : systemClock.sleep(ms, signal)),
};

/** A link whose periodic heartbeat is an hour apart: any other heartbeat is a prompt one. */
const linkWithHeartbeats = () => {
  const beats: HeartbeatRequest[] = [];
  const waiters: (() => void)[] = [];
  const client = {
    address: '127.0.0.1:1',
    heartbeat: (req: HeartbeatRequest) => {
      beats.push(req);
      for (const w of waiters.splice(0)) w();
      return Promise.resolve({ queues: [], cancel: [], drop: [], logDir: '' });
    },
    watchCommands: () => {
      const listeners = new Map<string, () => void>();
      return {
        on: (event: string, f: () => void) => listeners.set(event, f),
        cancel: () => listeners.get('end')?.(),
      };
    },
  } as unknown as CoordinatorClient;
  const runs = new ActiveRuns();
  const link = new CoordinatorLink({
    agent: {
      id: 'w',
      labels: {},
      concurrency: 2,
      client,
      clock,
      log: () => undefined,
      heartbeatEveryMs: 3_600_000,
      owner: { pid: 1, host: 'h', processStart: '' },
      version: 'test',
    },
    runs,
    outbox: { discard: () => undefined },
    queues: { accepting: true, consume: () => undefined, state: 'active', hold: () => undefined },
    onDrain: () => undefined,
    onLogDir: () => undefined,
  });
  /** Resolves once the coordinator has taken `n` heartbeats. */
  const beatsTaken = (n: number): Promise<void> =>
    beats.length >= n
      ? Promise.resolve()
      : new Promise<void>((r) => waiters.push(r)).then(() => beatsTaken(n));
  return { link, runs, beats, beatsTaken };
};

const running = (run = ref) => ({
  ref: run,
  root: run,
  parent: undefined,
  startedAt: '',
  stop: new AbortController(),
  dropped: false,
});

describe('CoordinatorLink', () => {
  it('sends one heartbeat once a run ended, its slot was released and its final report delivered', async () => {
    const { link, runs, beats, beatsTaken } = linkWithHeartbeats();
    runs.takeSlot();
    runs.add('k', running());
    link.start();
    await beatsTaken(1);
    expect(beats[0]).toMatchObject({ runningTasks: [{ run: ref }], slotsBusy: 1 });
    runs.end('k', Promise.resolve());
    runs.releaseSlot();
    await beatsTaken(2);
    link.halt();
    await link.whenHalted();
    // the run's end and its slot's release, in one turn, make one heartbeat
    expect(beats).toHaveLength(2);
    expect(beats[1]).toMatchObject({ runningTasks: [], slotsBusy: 0 });
  });

  it('lists an ended run until its final report was delivered (no heartbeat overtakes it)', async () => {
    const { link, runs, beats, beatsTaken } = linkWithHeartbeats();
    runs.takeSlot();
    runs.add('k', running());
    link.start();
    await beatsTaken(1);
    let deliver = (): void => undefined;
    runs.end('k', new Promise<void>((r) => (deliver = r)));
    runs.releaseSlot();
    // a heartbeat now, as the periodic one may go at any time, still lists the run
    await link.beat();
    expect(beats[1]).toMatchObject({ runningTasks: [{ run: ref }], slotsBusy: 0 });
    expect(beats).toHaveLength(2); // the prompt one waits for the report
    deliver();
    await beatsTaken(3);
    link.halt();
    await link.whenHalted();
    expect(beats).toHaveLength(3);
    expect(beats[2]).toMatchObject({ runningTasks: [], slotsBusy: 0 });
  });

  it('halts while a final report is still undelivered', async () => {
    const { link, runs, beats, beatsTaken } = linkWithHeartbeats();
    runs.takeSlot();
    runs.add('k', running());
    link.start();
    await beatsTaken(1);
    runs.end('k', new Promise<void>(() => undefined));
    runs.releaseSlot();
    link.halt();
    await link.whenHalted();
    expect(beats).toHaveLength(1); // the prompt one never went
  });

  it('sends the prompt heartbeat once the reports it waited for went, while a later run still reports', async () => {
    const { link, runs, beats, beatsTaken } = linkWithHeartbeats();
    const other = { name: 'd', dagRunId: 'r2' };
    runs.takeSlot();
    runs.takeSlot();
    runs.add('k', running());
    runs.add('k2', running(other));
    link.start();
    await beatsTaken(1);
    const waiting = new Promise<void>((resolve) => {
      const whenReported = runs.whenReported.bind(runs);
      runs.whenReported = (signal) => (resolve(), whenReported(signal));
    });
    let deliver = (): void => undefined;
    runs.end('k', new Promise<void>((r) => (deliver = r)));
    runs.releaseSlot();
    await waiting; // the prompt heartbeat waits for the report of 'k'
    runs.end('k2', new Promise<void>(() => undefined)); // its report stays in flight
    runs.releaseSlot();
    deliver();
    await beatsTaken(2);
    expect(beats[1]).toMatchObject({ runningTasks: [{ run: other }], slotsBusy: 0 });
    link.halt();
    await link.whenHalted();
  });
});
