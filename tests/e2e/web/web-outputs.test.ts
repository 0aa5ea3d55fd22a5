import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { callApi, untilFinal } from '../support/start-all.js';
import { openBrowser, startServer, type BrowserSession, type Server } from './harness.js';

// The run page's Outputs panel and waiting reason (issue 17): a real `trellis start-all` and
// a real browser.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const DAGS: Record<string, string> = {
  provision: `steps:
  - name: pick
    command: echo blue
    output: COLOUR
  - name: allocate
    run: host
    params: POOL=batch
    output: HOST
---
name: host
params:
  - POOL: default
steps:
  - name: name-it
    command: echo "\${POOL}-node-03"
    output: HOSTNAME
`,
  hold: `steps:
  - name: wait
    command: sleep 60
`,
};

let server: Server;
let b: BrowserSession;
let base: string;

beforeAll(async () => {
  [server, b] = await Promise.all([startServer(DAGS), openBrowser()]);
  base = `${server.url}/api/v2`;
});

afterAll(async () => {
  await b?.close();
  await server?.stop();
});

const start = async (dag: string, body: object = {}): Promise<string> => {
  const r = await callApi(base, 'POST', `/dags/${dag}/start`, body);
  expect(r.status).toBe(200);
  return r.body.dagRunId as string;
};

describe('the run page', () => {
  it("shows the steps' output variables and the child run's, linked to the child run", async () => {
    const id = await start('provision');
    await untilFinal(base, 'provision', id);
    const { page } = b;
    await page.goto(`${server.url}/runs/provision/${id}`);
    const table = page.locator('table[aria-label="Outputs"]');
    await table.locator('tr[data-output="COLOUR"]').waitFor();
    await expect
      .poll(() => table.locator('tr[data-output="COLOUR"] td').allTextContents())
      .toEqual(['pick', 'COLOUR', 'blue']);
    const fromChild = table.locator('tr[data-output="HOSTNAME"]');
    await expect.poll(() => fromChild.locator('td').nth(2).textContent()).toBe('batch-node-03');
    await expect
      .poll(() => table.locator('tr[data-output="HOST"] td').nth(2).textContent())
      .toContain('"HOSTNAME": "batch-node-03"');
    await b.shot('outputs-panel');
    await fromChild.getByRole('link', { name: /^host / }).click();
    await page.waitForURL(/\/children\//);
    await page.locator('table[aria-label="Outputs"] tr[data-output="HOSTNAME"]').waitFor();
    expect(b.problems).toEqual([]);
  });

  it('says why a queued run waits', async () => {
    const first = await start('hold', { dagRunId: 'hold-1' });
    // a start answers once its run is running: a second start of this one-at-a-time DAG waits
    const second = await start('hold', { dagRunId: 'hold-2' });
    const { page } = b;
    await page.goto(`${server.url}/runs/hold/${second}`);
    await expect
      .poll(() => page.getByTestId('wait-reason').textContent())
      .toMatch(/DAG "hold" runs one run at a time .* run hold-1 is active/);
    await b.shot('wait-reason');
    await callApi(base, 'GET', `/dag-runs/hold/${second}/dequeue`);
    await callApi(base, 'POST', `/dag-runs/hold/${first}/stop`);
    await untilFinal(base, 'hold', first);
    expect(b.problems).toEqual([]);
  });
});
