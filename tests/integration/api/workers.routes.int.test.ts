import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { API_ROUTE_TABLES } from '@trellis/api';
import { WorkerSchema, type WorkerInfo } from '@trellis/contract';
import { AppError, ErrorCode } from '@trellis/core';
import { apiHarness, type ApiHarness } from '../support/api-harness.js';
import { expectError } from '../support/expect-error.js';

/**
 * POST /workers/{id}/cordon|uncordon|drain (issue 19, and issue 20 for replicated coordinators):
 * 200 when the coordinator applied it, 202 when it handed it on to the worker's coordinator,
 * 404 for a worker no coordinator knows, 503 when the hand-on cannot go through Redis.
 */
const worker = (id: string): WorkerInfo => ({
  id,
  labels: { pool: 'gpu' },
  health: 'healthy',
  lastHeartbeat: new Date('2026-03-01T10:00:00Z'),
  runningTasks: [],
  capacity: 2,
  slotsBusy: 0,
  state: 'active',
});

let h: ApiHarness;
const asked: [string, string][] = [];

beforeAll(() => {
  h = apiHarness([...API_ROUTE_TABLES], {
    workers: () => [worker('here'), worker('there')],
    setWorkerState: (id, state) => {
      asked.push([id, state]);
      if (id === 'here')
        return Promise.resolve({ worker: { ...worker(id), state }, handedOn: false });
      if (id === 'there')
        return Promise.resolve({ worker: { ...worker(id), state }, handedOn: true });
      if (id === 'cut-off')
        return Promise.reject(
          new AppError(
            ErrorCode.ServiceUnavailable,
            'the request cannot reach it: Redis does not answer',
          ),
        );
      return Promise.resolve(undefined);
    },
  });
});
afterAll(() => h.cleanup());

const post = (path: string) => request(h.app).post(`/api/v2/workers/${path}`).send({});

describe('worker cordon, drain and uncordon', () => {
  it('answers 200 with the worker in its new state when applied here', async () => {
    const res = await post('here/cordon');
    expect(res.status).toBe(200);
    expect(WorkerSchema.parse(res.body)).toMatchObject({ id: 'here', state: 'cordoned' });
  });

  it("answers 202 with the worker as it will be when handed on to the worker's coordinator", async () => {
    const res = await post('there/drain');
    expect(res.status).toBe(202);
    expect(WorkerSchema.parse(res.body)).toMatchObject({ id: 'there', state: 'draining' });
    expect(asked.at(-1)).toEqual(['there', 'draining']);
  });

  it('answers 404 naming a worker no coordinator knows', async () => {
    expectError(
      await post('nobody/uncordon'),
      404,
      'not_found',
      /^worker "nobody" is known to no coordinator: see GET \/api\/v2\/workers for the ids$/,
    );
  });

  it('answers 503 service_unavailable, never 500, when Redis does not answer', async () => {
    expectError(await post('cut-off/cordon'), 503, 'service_unavailable', /Redis does not answer/);
  });
});
