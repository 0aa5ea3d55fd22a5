import { hostname } from 'node:os';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '@trellis/core';
import type { ClaimRequest, ClaimResponse, CoordinatorClient } from '@trellis/coordinator';
import type { DagRunRecord } from '@trellis/spec';
import { bullQueueName, jobIdOf, type RunJobData } from '../remote/job-data.js';
import { createRedis } from '../remote/redis-connection.js';
import { startRedis, type PrivateRedis } from '@trellis/testkit';
import { ActiveRuns } from './active-runs.js';
import { QueueConsumer } from './queue-consumer.js';

/**
 * The queue side of a worker's graceful stop, on a real redis-server: a run that reaches the
 * dispatch queue while the worker stops must stay on the queue for another worker, never be left
 * in BullMQ's `active` list by a worker that exits (with `maxStalledCount: 0` nothing takes it
 * again, and the run fails at the 10 s activation limit: issue 19's rolling restart).
 */

let redis: PrivateRedis;
let admin: ReturnType<typeof createRedis>;

beforeAll(async () => {
  redis = await startRedis();
  admin = createRedis(redis.url);
});

afterAll(async () => {
  admin.disconnect();
  await redis.stop();
});

const recordOf = (dagRunId: string): DagRunRecord => {
  const ref = { name: 'roll', dagRunId };
  return { ...ref, root: ref } as unknown as DagRunRecord;
};

const granted = (): ClaimResponse => ({
  granted: true,
  reason: '',
  recordJson: '',
  logDir: '',
  runLogSize: 0,
});

/** A worker's queue consumer on its own connection, granting every claim and recording it. */
const consumerOf = (prefix: string) => {
  const claimed: string[] = [];
  const executed: string[] = [];
  let onExecuted: () => void = () => undefined;
  const connection = createRedis(redis.url);
  const client = {
    claim: (req: ClaimRequest): Promise<ClaimResponse> => {
      claimed.push(req.run?.dagRunId ?? '');
      return Promise.resolve(granted());
    },
  } as unknown as CoordinatorClient;
  const consumer = new QueueConsumer(
    {
      id: 'w-stop',
      concurrency: 2,
      client,
      redis: connection,
      clock: systemClock,
      owner: { pid: process.pid, host: hostname(), processStart: '' },
      log: () => undefined,
      prefix,
    },
    new ActiveRuns(),
    (data) => {
      executed.push(data.record.dagRunId);
      onExecuted();
      return Promise.resolve();
    },
  );
  const untilExecuted = (id: string): Promise<void> =>
    new Promise((resolve) => {
      onExecuted = () => executed.includes(id) && resolve();
      onExecuted();
    });
  return { consumer, connection, claimed, untilExecuted };
};

const add = (queue: Queue<RunJobData>, dagRunId: string) => {
  const record = recordOf(dagRunId);
  const data = { record, dag: {}, localDags: [], dispatchedAt: '' } as unknown as RunJobData;
  return queue.add('run', data, { jobId: jobIdOf(record), removeOnComplete: true });
};

describe('queue consumer: a graceful stop', () => {
  // Several rounds: each is one stop of one worker process, a run arriving while it stops.
  it('leaves a run that arrives while it stops waiting on its queue, not active', async () => {
    for (let round = 0; round < 8; round++) {
      const prefix = `stop-${round}`;
      const queue = new Queue<RunJobData>(bullQueueName('pool=roll'), {
        connection: admin,
        prefix,
      });
      const w = consumerOf(prefix);
      w.consumer.consume('pool=roll');
      // the consumer takes runs (its fetch loop runs) before it stops
      await add(queue, `warm-${round}`);
      await w.untilExecuted(`warm-${round}`);
      await w.consumer.stopTaking();
      const job = await add(queue, `late-${round}`);
      await w.consumer.close();
      w.connection.disconnect(); // as `trellis worker` does once the stop is done
      const state = await queue.getJobState(job.id!);
      expect({ round, state, claimed: w.claimed }).toEqual({
        round,
        state: 'waiting',
        claimed: [`warm-${round}`],
      });
      await queue.close();
    }
  });
});
