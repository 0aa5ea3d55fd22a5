import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { callApi, untilFinal } from '../support/start-all.js';
import { openBrowser, startServer, type BrowserSession, type Server } from './harness.js';

// Editing and starting (issue 18 items 3 and 4): the New DAG page, the start dialog's parameter
// fields, schedules in words, times with their zone, the grid in DAG order, child run links.
// A real `trellis start-all` and a real browser.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const DAGS: Record<string, string> = {
  report: `description: Builds the report
schedule: "CRON_TZ=Asia/Tokyo 30 2 * * *"
params:
  - summary
  - REGION: eu
  - LIMIT: "10"
steps:
  - name: zeta
    command: echo "$1 \${REGION} \${LIMIT}"
  - name: alpha
    command: "true"
  - name: mid
    command: "true"
`,
  caller: `steps:
  - name: call-report
    run: report
    params: REGION=us
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

/** The run id at the end of a run page's URL. */
const runIdOf = (url: string): string => decodeURIComponent(url.split('/').pop() ?? '');

describe('editing and starting DAGs in the browser', () => {
  it('creates a DAG on the New DAG page, refusing a bad and a taken name', async () => {
    const { page } = b;
    await page.goto(`${server.url}/dags`);
    await page.getByRole('link', { name: 'New DAG' }).click();
    await page.waitForURL(/\/new-dag$/);
    const name = page.getByRole('textbox', { name: 'Name' });
    const create = page.getByRole('button', { name: 'Create', exact: true });
    await name.fill('bad name!');
    await expect
      .poll(() => page.locator('#new-dag-name-help').textContent())
      .toContain('"bad name!"');
    expect(await create.isDisabled()).toBe(true);
    await name.fill('report');
    await create.click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/report/);
    expect(await page.getByRole('alert').textContent()).toMatch(/Error 409/);
    await b.shot('20-new-dag-taken');
    // the browser logs the refused request; that one is expected
    const refused = b.problems.findIndex((p) => p.includes('status of 409'));
    expect(refused).toBeGreaterThanOrEqual(0);
    b.problems.splice(refused, 1);
    await name.fill('fresh-dag');
    const yaml =
      'description: made in the browser\nsteps:\n  - name: only\n    command: echo fresh\n';
    await page.getByRole('textbox', { name: 'DAG definition (YAML)' }).fill(yaml);
    await expect.poll(() => page.locator('.spec-editor .badge').textContent()).toContain('valid');
    await create.click();
    await page.waitForURL(/\/dags\/fresh-dag$/);
    const stored = await callApi(base, 'GET', '/dags/fresh-dag/spec');
    expect(stored.body.spec).toBe(yaml);
    expect(b.problems).toEqual([]);
  });

  it('starts with a field per declared parameter, defaults preset, and runs the edited value', async () => {
    const { page } = b;
    await page.goto(`${server.url}/dags/report`);
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    const dialog = page.getByRole('dialog');
    const region = dialog.getByRole('textbox', { name: 'REGION', exact: true });
    await expect.poll(() => region.inputValue()).toBe('eu');
    expect(await dialog.getByRole('textbox', { name: 'Positional 1' }).inputValue()).toBe(
      'summary',
    );
    expect(await dialog.getByRole('textbox', { name: 'LIMIT', exact: true }).inputValue()).toBe(
      '10',
    );
    await region.fill('ap south');
    await b.shot('21-start-dialog-params');
    // free-form text is one click away, and carries the fields' values
    await dialog.getByRole('checkbox', { name: 'Edit as text' }).check();
    expect(await dialog.getByRole('textbox', { name: 'Parameters as text' }).inputValue()).toBe(
      '"summary" REGION="ap south" LIMIT="10"',
    );
    await dialog.getByRole('checkbox', { name: 'Edit as text' }).uncheck();
    await dialog.getByRole('button', { name: 'Start', exact: true }).click();
    await page.waitForURL(/\/runs\/report\//);
    const id = runIdOf(page.url());
    const run = await untilFinal(base, 'report', id);
    expect(run.status).toBe(4);
    expect(JSON.parse(run.params as string)).toMatchObject({ REGION: 'ap south', LIMIT: '10' });
    const log = await callApi(base, 'GET', `/dag-runs/report/${id}/steps/zeta/log`);
    expect(log.body.content).toBe('summary ap south 10');

    // every time carries its zone; the UTC value is on hover
    const started = page.locator('.facts time').first();
    await started.waitFor();
    expect(await started.textContent()).toMatch(
      /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d (UTC|GMT[+-]\d+)$/,
    );
    expect(await started.getAttribute('title')).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ UTC$/);
    await b.shot('22-run-times-with-zone');
  });

  it('shows the schedule in words with next fires in its zone, and the grid in DAG order', async () => {
    const { page } = b;
    await page.goto(`${server.url}/dags/report`);
    const schedule = page.locator('[data-schedule="CRON_TZ=Asia/Tokyo 30 2 * * *"]');
    await expect
      .poll(() => schedule.locator('.schedule-words').textContent())
      .toBe('At 02:30 (Asia/Tokyo)');
    const fires = await schedule.locator('.next-fires time').allTextContents();
    expect(fires).toHaveLength(3);
    for (const f of fires) expect(f).toMatch(/^\d{4}-\d\d-\d\d 02:30:00 GMT\+9$/);
    await b.shot('23-dag-schedule-words');
    await page.getByRole('tab', { name: 'History' }).click();
    const rows = page.locator('table[aria-label="Run history"] tbody th');
    await rows.first().waitFor();
    expect(await rows.allTextContents()).toEqual(['zeta', 'alpha', 'mid']);
    await b.shot('24-history-dag-order');
  });

  it('links a step to its child run, and the child run to its parent', async () => {
    const started = await callApi(base, 'POST', '/dags/caller/start', {});
    const id = started.body.dagRunId as string;
    await untilFinal(base, 'caller', id);
    const { page } = b;
    await page.goto(`${server.url}/runs/caller/${id}`);
    const child = page.getByRole('list', { name: 'Child runs' }).getByRole('link');
    await child.first().waitFor();
    await b.shot('25-run-child-links');
    await child.first().click();
    await page.waitForURL(/\/children\//);
    const parent = page.getByTestId('parent-run');
    await expect.poll(() => parent.textContent()).toBe(`caller ${id}`);
    await b.shot('26-child-run-parent');
    await parent.getByRole('link').click();
    await page.waitForURL(`${server.url}/runs/caller/${id}`);
    expect(b.problems).toEqual([]);
  });
});
