import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runOutputRoutes, runRoutes } from '@trellis/api';
import { RunOutputsResponse } from '@trellis/contract';
import { apiHarness, type ApiHarness } from '../support/api-harness.js';
import { expectError } from '../support/expect-error.js';

/** GET /dag-runs/{name}/{dagRunId}/outputs and its child-run twin (docs/api.md, "Outputs"). */
let h: ApiHarness;
beforeEach(() => {
  h = apiHarness([runRoutes, runOutputRoutes]);
});
afterEach(() => h.cleanup());
const api = () => request(h.app);

const startAndFinish = async (file: string, dagRunId: string): Promise<void> => {
  await api().post(`/api/v2/dags/${file}/start`).send({ dagRunId }).expect(200);
  await h.finished(file, dagRunId);
};
const outputsOf = async (path: string) => {
  const res = await api().get(`/api/v2/dag-runs/${path}/outputs`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return RunOutputsResponse.parse(res.body).dagRunOutputs;
};

const PARENT = `steps:
  - name: pick
    command: echo blue
    output: COLOUR
  - name: provision
    run: allocate
    params: POOL=batch
    output: HOST
  - name: quiet
    command: "true"
---
name: allocate
params:
  - POOL: default
steps:
  - name: host
    command: echo "\${POOL}-node-03"
    output: HOSTNAME
  - name: ip
    command: echo 10.0.4.17
    output: IP
`;

describe('run outputs', () => {
  it("lists every step's output variables and a child run's outputs nested under its step", async () => {
    h.dag('parent', PARENT);
    await startAndFinish('parent', 'p1');
    const out = await outputsOf('parent/p1');
    expect(out).toMatchObject({ name: 'parent', dagRunId: 'p1', status: 4, params: '' });
    expect(out.steps.map((s) => s.step)).toEqual(['pick', 'provision', 'quiet']);
    const [pick, provision, quiet] = out.steps;
    expect(pick?.outputs).toEqual({ COLOUR: 'blue' });
    expect(quiet).toMatchObject({ outputs: {}, children: [] });
    expect(provision?.children).toHaveLength(1);
    const child = provision?.children[0];
    expect(child).toMatchObject({
      name: 'allocate',
      status: 4,
      statusLabel: 'finished',
      params: 'POOL=batch',
      outputs: { HOSTNAME: 'batch-node-03', IP: '10.0.4.17' },
    });
    expect(child?.steps.map((s) => [s.step, s.outputs])).toEqual([
      ['host', { HOSTNAME: 'batch-node-03' }],
      ['ip', { IP: '10.0.4.17' }],
    ]);
    // the step's own variable holds the spec's structured child output
    expect(JSON.parse(provision?.outputs.HOST ?? '{}')).toEqual({
      name: 'allocate',
      params: 'POOL=batch',
      outputs: { HOSTNAME: 'batch-node-03', IP: '10.0.4.17' },
    });
    expect(out.outputs).toMatchObject({ COLOUR: 'blue', HOST: provision?.outputs.HOST });
    // the child run's own route answers the same nested entry, and `latest` names the run
    const childId = child?.dagRunId ?? '';
    expect(await outputsOf(`parent/p1/children/${childId}`)).toEqual(child);
    expect(await outputsOf('parent/latest')).toEqual(out);
  });

  it('answers 404 for an unknown run or child and 400 for a bad run id', async () => {
    h.dag('parent', PARENT);
    await startAndFinish('parent', 'p2');
    expectError(await api().get('/api/v2/dag-runs/parent/nope/outputs'), 404, 'not_found');
    expectError(
      await api().get('/api/v2/dag-runs/parent/p2/children/nope/outputs'),
      404,
      'not_found',
    );
    expectError(await api().get('/api/v2/dag-runs/parent/a.b/outputs'), 400, 'bad_request');
  });
});
