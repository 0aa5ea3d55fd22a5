import { describe, expect, it } from 'vitest';
import { expectError } from '../support/expect-error.js';
import { useRunRoutes } from '../support/run-routes-fixture.js';
import { QueueSchema } from '@trellis/contract';

/** The queue list and the worker list. */
const t = useRunRoutes();
const { api, stepRunning } = t;

describe('queues and workers', () => {
  it('lists configured custom queues and dag-based queues with running runs', async () => {
    t.h.dag('slow', 'steps:\n  - {name: wait, command: "sleep 30"}\n');
    const running = stepRunning('wait');
    await api().post('/api/v2/dags/slow/start').send({ dagRunId: 'q1' });
    await running;
    const queues = (await api().get('/api/v2/queues')).body.queues.map((q: unknown) =>
      QueueSchema.parse(q),
    );
    expect(queues).toEqual([
      {
        name: 'batch',
        type: 'custom',
        maxConcurrency: 2,
        summary: { running: 0, queued: 0, total: 0 },
        runningDAGRuns: [],
        queuedDAGRuns: [],
      },
      expect.objectContaining({
        name: 'slow',
        type: 'dag-based',
        summary: { running: 1, queued: 0, total: 1 },
      }),
    ]);
    expect(queues[1]?.maxConcurrency).toBeUndefined();
    await api().post('/api/v2/dag-runs/slow/q1/stop');
    await t.h.finished('slow', 'q1');
  });

  it('answers 503 service_unavailable for workers without a coordinator', async () => {
    expectError(await api().get('/api/v2/workers'), 503, 'service_unavailable');
  });
});
