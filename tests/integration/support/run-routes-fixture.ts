import request from 'supertest';
import { afterEach, beforeEach, expect } from 'vitest';
import { queueRoutes, runRoutes } from '@trellis/api';
import { NodeStatus } from '@trellis/core';
import type { DagRunRecord } from '@trellis/spec';
import { apiHarness, type ApiHarness } from './api-harness.js';

/** The run and queue endpoints over an API harness, rebuilt before each test of the calling file. */
export interface RunRoutesFixture {
  /** The current test's harness (queue "batch" of 2 configured). */
  readonly h: ApiHarness;
  readonly api: () => ReturnType<typeof request>;
  /** Waits until a step of a run is running (its status is durable before the event fires). */
  readonly stepRunning: (step: string) => Promise<DagRunRecord>;
  /** Starts DAG `file` over the API (expecting 200) and resolves with the finished record. */
  readonly startAndFinish: (file: string, body?: object) => Promise<DagRunRecord>;
}

/** Registers beforeEach/afterEach hooks in the calling test file; call at its top level. */
export const useRunRoutes = (): RunRoutesFixture => {
  let current: ApiHarness | undefined;
  beforeEach(() => {
    current = apiHarness([runRoutes, queueRoutes], {
      queueConfig: [{ name: 'batch', maxConcurrency: 2 }],
    });
  });
  afterEach(() => current?.cleanup());

  const harness = (): ApiHarness => {
    if (!current) throw new Error('useRunRoutes: the harness exists inside tests only');
    return current;
  };
  const api = () => request(harness().app);
  return {
    get h() {
      return harness();
    },
    api,
    stepRunning: (step) =>
      new Promise((resolve) => {
        const events = harness().events;
        const on = (r: DagRunRecord, name: string, status: number): void => {
          if (name === step && status === NodeStatus.Running) {
            events.off('node:statusChanged', on);
            resolve(r);
          }
        };
        events.on('node:statusChanged', on);
      }),
    startAndFinish: async (file, body = {}) => {
      const res = await api().post(`/api/v2/dags/${file}/start`).send(body);
      expect(res.status).toBe(200);
      return harness().finished(file, (res.body as { dagRunId: string }).dagRunId);
    },
  };
};
