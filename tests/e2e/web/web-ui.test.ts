import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openBrowser, startServer, type BrowserSession, type Server } from './harness.js';

// A real server and browser on a 2-core CI machine: steps wait for events, with room to spare.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const DAGS: Record<string, string> = {
  'etl-nightly': `description: Extract, transform and load
type: graph
tags: [etl, nightly]
schedule: "0 2 * * *"
steps:
  - name: extract
    command: echo extracting
  - name: transform-a
    command: echo transform a
    depends: [extract]
  - name: transform-b
    command: echo transform b
    depends: [extract]
  - name: load
    command: echo loaded
    depends: [transform-a, transform-b]
`,
  'slow-logger': `description: Prints a line every 50 ms
steps:
  - name: talk
    command: sh -c 'i=1; while [ $i -le 40 ]; do echo "line $i"; i=$((i+1)); sleep 0.05; done'
`,
  sleeper: `description: Sleeps until stopped
steps:
  - name: wait
    command: sleep 60
`,
  'big-log': `description: Writes 200,000 lines
steps:
  - name: spew
    command: seq 1 200000
`,
  'locked-params': `description: Parameters fixed by the author
runConfig:
  disableParamEdit: true
  disableRunIdEdit: true
params:
  - REGION: eu
steps:
  - echo \${REGION}
`,
  parent: `description: Calls etl-nightly as a child run
steps:
  - name: call-child
    run: etl-nightly
`,
  'report-weekly': `tags: [report]
steps:
  - echo weekly
`,
};

let server: Server;
let b: BrowserSession;

beforeAll(async () => {
  [server, b] = await Promise.all([startServer(DAGS), openBrowser()]);
});

afterAll(async () => {
  await b?.close();
  await server?.stop();
});

/** The 503 of /workers (no coordinator yet) is the page's expected "not available" state. */
const unexpectedProblems = () =>
  b.problems.filter((p) => !(p.includes('status of 503') && p.includes('/api/v2/workers')));

describe('the web UI in headless Chromium against trellis start-all', () => {
  it('lists the DAGs and searches them by name and tag', async () => {
    const { page } = b;
    await page.goto(`${server.url}/dags`); // the home page is the dashboard (issue 18)
    const rows = page.locator('table[aria-label="DAGs"] tbody tr[data-dag]');
    await rows.first().waitFor();
    expect(await rows.count()).toBe(7);
    await expect.poll(() => page.locator('.system').textContent()).toContain('Healthy');
    // the next scheduled start of the scheduled DAG (nothing has run yet, so the only date)
    expect(await page.locator('tr[data-dag="etl-nightly"]').textContent()).toMatch(
      /\d{4}-\d\d-\d\d 0?\d\d:00:00/,
    );
    await b.shot('01-dag-list');

    await page.getByRole('searchbox', { name: 'Search DAGs by name' }).fill('etl');
    await expect.poll(() => rows.count()).toBe(1);
    await page.getByRole('searchbox', { name: 'Search DAGs by name' }).fill('');
    await expect.poll(() => rows.count()).toBe(7);
    await page.getByRole('combobox', { name: 'Filter by tag' }).selectOption('report');
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().getAttribute('data-dag')).toBe('report-weekly');
    await page.getByRole('combobox', { name: 'Filter by tag' }).selectOption('');
    await expect.poll(() => rows.count()).toBe(7);
  });

  it('opens a DAG and draws its step graph from depends', async () => {
    const { page } = b;
    await page.getByRole('link', { name: 'etl-nightly' }).click();
    await page.locator('svg.graph g[data-step]').first().waitFor();
    const vertices = page.locator('svg.graph g[data-step]');
    const steps: [string, string][] = [];
    for (let i = 0; i < (await vertices.count()); i++)
      steps.push([
        (await vertices.nth(i).getAttribute('data-step')) ?? '',
        (await vertices.nth(i).getAttribute('transform')) ?? '',
      ]);
    expect(steps.map((s) => s[0])).toEqual(['extract', 'transform-a', 'transform-b', 'load']);
    expect(await page.locator('svg.graph polyline.graph-edge').count()).toBe(4);
    // left to right: extract before load
    const x = (t: string) => Number(/translate\(([-\d.]+)/.exec(t)?.[1]);
    expect(x(steps[0]![1])).toBeLessThan(x(steps[3]![1]));
    await b.shot('02-dag-graph');
  });

  it('starts a run from the params dialog and watches it finish', async () => {
    const { page } = b;
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Start', exact: true }).click();
    await page.waitForURL(/\/runs\/etl-nightly\//);
    await page.locator('.page-head .badge[data-status="finished"]').waitFor({ timeout: 20_000 });
    await expect
      .poll(() => page.locator('svg.graph g[data-status="finished"]').count(), { timeout: 10_000 })
      .toBe(4);
    expect(await page.locator('table[aria-label="Steps"] tbody tr').count()).toBe(4);
    expect(await page.locator('.gantt-bar').count()).toBe(4);
    await b.shot('03-run-finished');

    // the run history grid on the DAG page
    await page.getByRole('link', { name: 'etl-nightly' }).first().click();
    await page.getByRole('tab', { name: 'History' }).click();
    await page.locator('table[aria-label="Run history"] .cell').first().waitFor();
    expect(await page.locator('table[aria-label="Run history"] tbody tr').count()).toBe(4);
    await b.shot('04-run-history');
  });

  it("enqueues from the list with the DAG's fixed parameters, and the queue runs it", async () => {
    const { page } = b;
    await page.goto(`${server.url}/dags`);
    await page
      .locator('tr[data-dag="locked-params"]')
      .getByRole('button', { name: 'Enqueue' })
      .click();
    const dialog = page.getByRole('dialog');
    const params = dialog.getByRole('textbox', { name: 'Parameters' });
    await expect.poll(() => params.inputValue()).toContain('REGION');
    expect(await params.getAttribute('readonly')).not.toBeNull();
    expect(await dialog.getByRole('textbox', { name: 'Run id (optional)' }).isDisabled()).toBe(
      true,
    );
    await b.shot('04b-enqueue-dialog');
    await dialog.getByRole('button', { name: 'Enqueue', exact: true }).click();
    await page.waitForURL(/\/runs\/locked-params\//);
    await page.locator('.page-head .badge[data-status="finished"]').waitFor({ timeout: 30_000 });
    expect(await page.locator('.facts').textContent()).toContain('Queued');
  });

  it('navigates from a run to its child run and back', async () => {
    const { page } = b;
    const started = (await (
      await fetch(`${server.url}/api/v2/dags/parent/start`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{}',
      })
    ).json()) as { dagRunId: string };
    await page.goto(`${server.url}/runs/parent/${started.dagRunId}`);
    await page.locator('.page-head .badge[data-status="finished"]').waitFor({ timeout: 30_000 });
    await page
      .locator('tr[data-step="call-child"]')
      .getByRole('link', { name: 'etl-nightly' })
      .click();
    await page.waitForURL(/\/children\//);
    await page.getByRole('heading', { name: /etl-nightly/ }).waitFor();
    await expect.poll(() => page.locator('table[aria-label="Steps"] tbody tr').count()).toBe(4);
    await b.shot('05b-child-run');
    await page
      .getByRole('navigation', { name: 'Breadcrumb' })
      .getByRole('link', { name: 'parent' })
      .click();
    await page.waitForURL(`${server.url}/runs/parent/${started.dagRunId}`);
  });

  it('follows a step log while the run is running', async () => {
    const { page } = b;
    await page.goto(`${server.url}/dags/slow-logger`);
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Start', exact: true }).click();
    await page.waitForURL(/\/runs\/slow-logger\//);
    await page.locator('tr[data-step="talk"]').getByRole('button', { name: 'stdout' }).click();
    const count = page.getByTestId('log-count');
    // lines arrive while the step runs (live), then all 40 once it is done
    await expect
      .poll(async () => (await count.textContent()) ?? '', { timeout: 10_000 })
      .toMatch(/live/);
    const during = Number(/[\d,]+/.exec((await count.textContent()) ?? '')?.[0] ?? 0);
    expect(during).toBeLessThan(40);
    await page.locator('.page-head .badge[data-status="finished"]').waitFor({ timeout: 20_000 });
    await expect.poll(() => count.textContent(), { timeout: 10_000 }).toBe('40 lines');
    await expect.poll(() => page.locator('.log-line').last().textContent()).toContain('line 40');
    await b.shot('05-log-follow');
  });

  it('shows a 200,000-line log drawing only the rows on screen', async () => {
    const { page } = b;
    await page.goto(`${server.url}/dags/big-log`);
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Start', exact: true }).click();
    await page.waitForURL(/\/runs\/big-log\//);
    await page.locator('.page-head .badge[data-status="finished"]').waitFor({ timeout: 30_000 });
    await page.locator('tr[data-step="spew"]').getByRole('button', { name: 'stdout' }).click();
    const count = page.getByTestId('log-count');
    await expect.poll(() => count.textContent(), { timeout: 30_000 }).toBe('200,000 lines');
    // following: the end is on screen; only a window of rows is in the DOM
    await expect.poll(() => page.locator('.log-line').last().textContent()).toContain('200000');
    expect(await page.locator('.log-line').count()).toBeLessThan(200);
    await page.evaluate("document.querySelector('.log-body').scrollTop = 0");
    await expect.poll(() => page.locator('.log-line').first().textContent()).toBe('11');
    await b.shot('06-log-200k');
  });

  it('validates a spec as you type and shows the problem at its line', async () => {
    const { page } = b;
    await page.goto(`${server.url}/dags/report-weekly?tab=spec`);
    const editor = page.getByRole('textbox', { name: 'DAG definition (YAML)' });
    await editor.waitFor();
    await expect.poll(() => page.locator('.spec-editor .badge').textContent()).toContain('valid');
    await editor.fill('tags: [report]\nsteps:\n  - name: broken\n    command: "echo \\"unclosed\n');
    await page.getByRole('list', { name: 'Problems' }).waitFor();
    const problems = await page.getByRole('list', { name: 'Problems' }).textContent();
    expect(problems).toMatch(/line \d+/);
    expect(await page.locator('.editor .gutter .bad').count()).toBeGreaterThan(0);
    await b.shot('06-spec-error');
    // saving is refused with the same problems, and the file keeps its old text
    await page.getByRole('button', { name: 'Save' }).click();
    await page.locator('.toast.error').waitFor();
    const spec = (await (await fetch(`${server.url}/api/v2/dags/report-weekly/spec`)).json()) as {
      spec: string;
    };
    expect(spec.spec).toContain('echo weekly');
    // a valid edit is saved
    await editor.fill('tags: [report]\nsteps:\n  - echo weekly v2\n');
    await expect.poll(() => page.locator('.spec-editor .badge').textContent()).toContain('valid');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect
      .poll(
        async () =>
          (
            (await (await fetch(`${server.url}/api/v2/dags/report-weekly/spec`)).json()) as {
              spec: string;
            }
          ).spec,
      )
      .toContain('weekly v2');
  });

  it('stops a running run', async () => {
    const { page } = b;
    await page.goto(`${server.url}/dags/sleeper`);
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Start', exact: true }).click();
    await page.waitForURL(/\/runs\/sleeper\//);
    await page.locator('.page-head .badge[data-status="running"]').waitFor({ timeout: 10_000 });
    await b.shot('07-run-running');
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Stop run' }).click();
    await page.locator('.page-head .badge[data-status="cancelled"]').waitFor({ timeout: 20_000 });
    await b.shot('08-run-stopped');
  });

  it('shows the queues and workers pages', async () => {
    const { page } = b;
    await page.getByRole('link', { name: 'Queues' }).click();
    await page.getByRole('heading', { name: 'Queues' }).waitFor();
    // the page shows exactly the queues the API lists (or says there are none)
    const { queues } = (await (await fetch(`${server.url}/api/v2/queues`)).json()) as {
      queues: { name: string }[];
    };
    if (queues.length === 0)
      await page.getByText('No queues: nothing is running or queued.').waitFor();
    else
      await expect
        .poll(() => page.locator('article.card h2').allTextContents())
        .toEqual(queues.map((q) => q.name));
    await b.shot('09-queues');
    await page.getByRole('link', { name: 'Workers' }).click();
    await page.getByRole('heading', { name: 'Workers' }).waitFor();
    // without a coordinator the API answers 503: the page says so instead of failing
    const notice = page.locator('.notice[role="status"]');
    await notice.waitFor();
    expect(await notice.textContent()).toMatch(/^Not available on this server\. .*coordinator/);
    await page.getByText('Workers appear here when the server runs in distributed mode').waitFor();
    expect(await page.locator('article.card').count()).toBe(0);
    await b.shot('10-workers');
  });

  it('is usable from the keyboard: tab to Start, open the dialog, close it with Escape', async () => {
    const { page } = b;
    await page.goto(`${server.url}/dags?name=etl`);
    await page.locator('tr[data-dag="etl-nightly"]').waitFor();
    await page.getByRole('searchbox', { name: 'Search DAGs by name' }).focus();
    let focused = '';
    for (let i = 0; i < 30 && focused !== 'Start'; i++) {
      await page.keyboard.press('Tab');
      focused = await page.evaluate<string>("document.activeElement?.textContent?.trim() ?? ''");
    }
    expect(focused).toBe('Start');
    await page.keyboard.press('Enter');
    await page.getByRole('dialog').waitFor();
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
  });

  it('fits a narrow window', async () => {
    const { page } = b;
    await page.setViewportSize({ width: 390, height: 800 });
    await page.goto(`${server.url}/dags`);
    await page.locator('tr[data-dag]').first().waitFor();
    const overflow = await page.evaluate<number>(
      'document.documentElement.scrollWidth - document.documentElement.clientWidth',
    );
    expect(overflow).toBeLessThanOrEqual(0);
    await b.shot('11-narrow-list');
    await page.setViewportSize({ width: 1280, height: 860 });
  });

  it('logged no console errors', () => {
    expect(unexpectedProblems()).toEqual([]);
  });
});
