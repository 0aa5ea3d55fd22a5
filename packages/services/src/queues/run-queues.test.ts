import { describe, expect, it } from 'vitest';
import type { QueueInfo } from './queue-of.js';
import { RunQueues, type Activation, type WaitingRun } from './run-queues.js';

/** A ledger whose activations are recorded (each run stays active: it is "running"). */
const ledger = () => {
  const activated: string[] = [];
  const queues = new RunQueues({
    nowMs: () => 0,
    activate: (w: WaitingRun): Promise<Activation> => {
      activated.push(w.ref.dagRunId);
      return Promise.resolve({ kind: 'running' });
    },
    blockedBy: () => null,
    warn: () => undefined,
  });
  return { queues, activated };
};

const q = (capacity: number): QueueInfo => ({ name: 'q', type: 'dag-based', capacity });
const waiting = (id: string): WaitingRun => ({
  ref: { name: 'job', dagRunId: id },
  queuedAt: `2026-01-01T00:00:0${id.at(-1) ?? '0'}.000Z`,
  selector: {},
});

describe('RunQueues capacity', () => {
  it('gives a queue first met through an adopted run its declared capacity', () => {
    const { queues, activated } = ledger();
    queues.occupy(q(3), { name: 'job', dagRunId: 'adopted' });
    for (const id of ['w1', 'w2', 'w3']) queues.enqueue(q(3), waiting(id));
    expect(activated).toEqual(['w1', 'w2']);
  });

  it('takes the capacity each enqueue declares, not the one the queue was first held with', () => {
    const { queues, activated } = ledger();
    queues.occupy(q(1), { name: 'job', dagRunId: 'old-snapshot' });
    queues.enqueue(q(1), waiting('w1'));
    expect(activated).toEqual([]);
    // The DAG now allows 3 at once: the next enqueue declares it and the queue fills up to it.
    queues.enqueue(q(3), waiting('w2'));
    expect(activated).toEqual(['w1', 'w2']);
    expect(queues.capacityOf('q')).toBe(3);
  });
});
