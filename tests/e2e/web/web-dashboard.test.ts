import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { callApi, untilFinal } from '../support/start-all.js';
import {
  ARTIFACTS,
  openBrowser,
  startServer,
  type BrowserSession,
  type Server,
} from './harness.js';

// The dashboard (the UI's home) and the runs page (issue 18 items 1, 2): a real `trellis
// start-all` in embedded mode and a real headless Chromium.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const DAGS: Record<string, string> = {
  alpha: 'tags: [etl]\nsteps:\n  - name: s\n    command: echo alpha\n',
  broken: 'tags: [report]\nsteps:\n  - name: s\n    command: "false"\n',
  hold: 'steps:\n  - name: wait\n    command: sleep 60\n',
  nightly: 'schedule: "0 2 * * *"\nsteps:\n  - name: s\n    command: echo nightly\n',
};

let server: Server;
let b: BrowserSession;
let base: string;

beforeAll(async () => {
  [server, b] = await Promise.all([
    startServer(DAGS, 'queues:\n  - name: batch\n    maxConcurrency: 2\n'),
    openBrowser(),
  ]);
  base = `${server.url}/api/v2`;
});

afterAll(async () => {
  await b?.close();
  await server?.stop();
});

const start = async (dag: string, dagRunId: string, how = 'start'): Promise<void> => {
  const r = await callApi(base, 'POST', `/dags/${dag}/${how}`, { dagRunId });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
};

const count = (label: string) => b.page.locator(`[data-count="${label}"]`).textContent();

/** True when the focused element shows a visible focus outline (keyboard focus). */
const focusShows = () =>
  b.page.evaluate<boolean>(
    "(() => { const el = document.activeElement; return !!el && el !== document.body && el.matches(':focus-visible') && getComputedStyle(el).outlineStyle !== 'none'; })()",
  );

/** An attribute of every element `selector` finds on `p`, in order. */
const attrs = (p: Page, selector: string, name: string) =>
  p.evaluate<(string | null)[]>(
    `[...document.querySelectorAll(${JSON.stringify(selector)})].map((e) => e.getAttribute(${JSON.stringify(name)}))`,
  );

/** An attribute of the focused element. */
const focusedAttr = (name: string) =>
  b.page.evaluate<string | null>(`document.activeElement?.getAttribute('${name}') ?? null`);

describe('the dashboard', () => {
  it('shows counts by status, queues, "embedded mode: no workers" and the next fires', async () => {
    for (const id of ['a1', 'a2']) await start('alpha', id);
    await start('broken', 'x1');
    await Promise.all([
      untilFinal(base, 'alpha', 'a1'),
      untilFinal(base, 'alpha', 'a2'),
      untilFinal(base, 'broken', 'x1'),
    ]);
    const { page } = b;
    await page.goto(`${server.url}/`);
    await expect.poll(() => page.getByTestId('count-total').textContent()).toBe('3');
    expect([await count('finished'), await count('failed'), await count('running')]).toEqual([
      '2',
      '1',
      '0',
    ]);
    expect(await page.title()).toBe('Dashboard · Trellis');
    await expect
      .poll(() => attrs(page, '.timeline .tl-row[data-dag]', 'data-dag'))
      .toEqual(['alpha', 'broken']);
    expect(await page.getByTestId('embedded-mode').textContent()).toContain(
      'embedded mode: no workers',
    );
    expect(await page.locator('[data-queue="batch"] [data-testid="occupancy"]').textContent()).toBe(
      '0/2 running, 0 waiting',
    );
    expect(await page.getByTestId('dash-next').textContent()).toMatch(
      /nightly\d{4}-\d\d-\d\d 0?2:00:00|nightly \d{4}/,
    );
    await b.shot('dashboard');
    expect(b.problems).toEqual([]);
  });

  it('follows a run started through the API without a reload', async () => {
    const { page } = b;
    await page.getByTestId('live').getByText('live', { exact: true }).waitFor();
    await page.evaluate('window.notReloaded = true');
    await start('hold', 'h1');
    await start('hold', 'h2', 'enqueue');
    await page.locator('.tl-bar[data-run="h1"]').waitFor();
    await expect.poll(() => count('running')).toBe('1');
    await expect
      .poll(() => page.locator('[data-queue="hold"] [data-testid="occupancy"]').textContent())
      .toBe('1 running, 1 waiting');
    expect(await page.locator('[data-queue="hold"]').textContent()).toContain('h2');
    expect(await page.evaluate<boolean>('window.notReloaded === true')).toBe(true);
    await b.shot('dashboard-live');

    // keyboard: a timeline bar takes focus visibly and opens its run
    const bar = page.locator('.tl-bar[data-run="h1"]');
    await bar.focus();
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Tab');
    expect(await focusedAttr('data-run')).toBe('h1');
    expect(await focusShows()).toBe(true);
    await b.shot('dashboard-focus');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/runs\/hold\/h1$/);

    await callApi(base, 'GET', '/dag-runs/hold/h2/dequeue');
    await callApi(base, 'POST', '/dag-runs/hold/h1/stop');
    await untilFinal(base, 'hold', 'h1');
    expect(b.problems).toEqual([]);
  });
});

describe('the runs page', () => {
  const rowIds = () => attrs(b.page, 'table[aria-label="Runs"] tbody tr', 'data-run');

  it('filters by status, DAG, tag, worker and date, pages, and keeps the view in the URL', async () => {
    for (const id of ['a3', 'a4', 'a5']) await start('alpha', id);
    for (const id of ['a3', 'a4', 'a5']) await untilFinal(base, 'alpha', id);
    const { page } = b;
    await page.goto(`${server.url}/runs`);
    await expect.poll(() => page.getByTestId('total').textContent()).toBe('8 runs');
    expect(await page.title()).toBe('Runs · Trellis');

    const form = page.getByRole('form', { name: 'Filters' });
    await form.getByLabel('Status').selectOption({ label: 'finished' });
    await form.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(rowIds).toEqual(['a5', 'a4', 'a3', 'a2', 'a1']);
    expect(new URL(page.url()).searchParams.get('status')).toBe('4');

    await form.getByLabel('Tag').fill('report');
    await form.getByLabel('Status').selectOption({ label: 'any' });
    await form.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(rowIds).toEqual(['x1']);

    await form.getByRole('button', { name: 'Clear' }).click();
    await form.getByLabel('Worker').fill('w9');
    await form.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('No runs match these filters.').waitFor();
    await form.getByLabel('Worker').fill('local');
    await form.getByRole('button', { name: 'Apply' }).click();
    // every run executed in the server; h2, dequeued before it ran, was executed by no one
    await expect.poll(() => page.getByTestId('total').textContent()).toBe('7 runs');
    expect(await rowIds()).not.toContain('h2');

    const tomorrow = new Date(Date.now() + 86_400_000);
    const day = `${tomorrow.getFullYear()}-${String(tomorrow.getMonth() + 1).padStart(2, '0')}-${String(tomorrow.getDate()).padStart(2, '0')}`;
    await form.getByLabel('From').fill(day);
    await form.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('No runs match these filters.').waitFor();

    await b.shot('runs-filtered');
    expect(b.problems).toEqual([]);
  });

  it('pages, and a shared URL reproduces the view after a reload and in a new tab', async () => {
    const { page } = b;
    await page.goto(`${server.url}/runs?dag=alpha&perPage=2`);
    await expect.poll(rowIds).toEqual(['a5', 'a4']);
    const pager = page.getByRole('navigation', { name: 'Pages' });
    expect(await pager.textContent()).toContain('Page 1 of 3');
    await pager.getByRole('button', { name: /Next/ }).click();
    await expect.poll(rowIds).toEqual(['a3', 'a2']);
    const shared = page.url();
    expect(new URL(shared).searchParams.get('page')).toBe('2');

    await page.reload();
    await expect.poll(rowIds).toEqual(['a3', 'a2']);
    const tab = await b.context.newPage();
    try {
      await tab.goto(shared);
      await tab.locator('table[aria-label="Runs"] tbody tr[data-run="a3"]').waitFor();
      expect(await attrs(tab, 'table[aria-label="Runs"] tbody tr', 'data-run')).toEqual([
        'a3',
        'a2',
      ]);
      expect(await tab.getByLabel('DAG').inputValue()).toBe('alpha');
      expect(await tab.getByRole('navigation', { name: 'Pages' }).textContent()).toContain(
        'Page 2 of 3',
      );
      await tab.screenshot({ path: `${ARTIFACTS}/runs-shared-url.png`, fullPage: true });
    } finally {
      await tab.close();
    }

    // keyboard: Tab from the status filter reaches the DAG field with a visible focus ring
    await page.getByLabel('Status').focus();
    await page.keyboard.press('Tab');
    expect(await focusedAttr('name')).toBe('dag');
    expect(await focusShows()).toBe(true);
    await b.shot('runs-paged');
    expect(b.problems).toEqual([]);
  });
});
