import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RunStatus } from '@trellis/core';
import { writeFinishedRun } from '@trellis/testkit';
import { openBrowser, startServer, type BrowserSession, type Server } from './harness.js';

// A real server and browser on a 2-core CI machine: room to spare (seeding and removing 10,000
// runs takes a while).
vi.setConfig({ testTimeout: 60_000, hookTimeout: 180_000 });

/** 1,000 DAG files: the list pages on the server, so each page stays 50 rows. */
const DAGS: Record<string, string> = Object.fromEntries(
  Array.from({ length: 1000 }, (_, i) => {
    const name = `dag-${String(i).padStart(4, '0')}`;
    const tag = i % 10 === 0 ? 'tens' : 'other';
    return [name, `description: number ${i}\ntags: [${tag}]\nsteps:\n  - echo ${i}\n`];
  }),
);

/** Final status of DAG number d's runs: failed for 3, 13, ...; cancelled for 7, 27, ...; else finished. */
const statusOf = (d: number): RunStatus => (d % 10 === 3 ? 2 : d % 20 === 7 ? 3 : 4);

/** Run i of every DAG is on day i + 1 of January 2026 (noon UTC: that day in any browser zone). */
const dayOf = (i: number): string => `2026-01-${String(i + 1).padStart(2, '0')}`;

/** 10,000 finished runs of history, 10 per DAG, one a day, written as the store writes them. */
const seedHistory = (home: string): void => {
  Object.keys(DAGS).forEach((name, d) => {
    for (let i = 0; i < 10; i++) {
      const at = new Date(Date.parse(`${dayOf(i)}T12:00:00Z`) + d * 1000).toISOString();
      writeFinishedRun(home, name, `run-${String(i).padStart(2, '0')}`, at, statusOf(d));
    }
  });
};

let server: Server;
let b: BrowserSession;

beforeAll(async () => {
  [server, b] = await Promise.all([startServer(DAGS, '', 0, { seed: seedHistory }), openBrowser()]);
  // a dashboard's server has been up: its run index is built (the first read builds it)
  const warm = await fetch(`${server.url}/api/v2/dags?perPage=1000`);
  expect(warm.status).toBe(200);
});

afterAll(async () => {
  await b?.close();
  await server?.stop();
});

describe('the DAG list with 1,000 DAGs and 10,000 runs of history', () => {
  it('paints its first page in under 1 s (Performance API)', async () => {
    const { page } = b;
    await page.goto(`${server.url}/dags`);
    // when the rows are first in a frame, in the page's own clock (0 = navigation start)
    const rowsAt = await page.waitForFunction(
      `document.querySelector('table[aria-label="DAGs"] tbody tr[data-dag]') ? performance.now() : undefined`,
    );
    const rowsMs = (await rowsAt.jsonValue()) as number;
    const fcp = await page.evaluate(
      () => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1,
    );
    // where the time went: each request's start and end, from navigation start
    const requests = await page.evaluate<string>(`performance
      .getEntriesByType('resource')
      .map((e) => new URL(e.name).pathname + ' ' + e.startTime.toFixed(0) + '-' + e.responseEnd.toFixed(0))
      .join(', ')`);
    expect(await page.locator('tr[data-dag="dag-0000"] .badge').textContent()).toBe('finished');
    console.log(
      `DAG list, 1,000 DAGs and 10,000 runs: first contentful paint ${fcp.toFixed(0)} ms, first page of rows painted ${rowsMs.toFixed(0)} ms after navigation start (target < 1000 ms); requests (ms): ${requests}`,
    );
    // measured, not timed (house rule: no wall-clock thresholds in the suite): the figure is
    // printed beside its target; the check is that the page painted and showed its rows
    expect(fcp).toBeGreaterThan(0);
    expect(rowsMs).toBeGreaterThan(0);
  });

  it('shows pages of 50, pages on, and searches', async () => {
    const { page } = b;
    const rows = page.locator('table[aria-label="DAGs"] tbody tr[data-dag]');
    const t0 = performance.now();
    await page.goto(`${server.url}/dags`);
    await rows.first().waitFor();
    const firstPageMs = performance.now() - t0;
    expect(await rows.count()).toBe(50);
    expect(await page.locator('.page-head').textContent()).toContain('1000 in total');
    expect(await page.getByRole('navigation', { name: 'Pages' }).textContent()).toContain(
      'Page 1 of 20',
    );
    const t1 = performance.now();
    await page.getByRole('button', { name: 'Next ›' }).click();
    await page.locator('tr[data-dag="dag-0050"]').waitFor();
    const nextPageMs = performance.now() - t1;
    expect(await rows.count()).toBe(50);
    await page.getByRole('combobox', { name: 'Filter by tag' }).selectOption('tens');
    await expect.poll(() => page.locator('.page-head').textContent()).toContain('100 in total');
    await page.getByRole('searchbox', { name: 'Search DAGs by name' }).fill('dag-099');
    await expect.poll(() => rows.count()).toBe(1);
    await b.shot('13-dag-list-1000');
    // figures, not thresholds (wall-clock limits would make the test flaky on a busy machine)
    console.log(
      `DAG list, 1,000 DAGs: first page ${firstPageMs.toFixed(0)} ms, next page ${nextPageMs.toFixed(0)} ms`,
    );
  });
});

describe('the dashboard and the runs page over 10,000 runs', () => {
  const rowIds = () =>
    b.page.evaluate<string[]>(
      `[...document.querySelectorAll('table[aria-label="Runs"] tbody tr')].map((e) => e.getAttribute('data-dag') + '/' + e.getAttribute('data-run'))`,
    );

  it("counts a chosen day's 1,000 runs by status and draws them by DAG", async () => {
    const { page } = b;
    const day = dayOf(2);
    await page.goto(`${server.url}/?from=${day}&to=${day}`);
    await expect.poll(() => page.getByTestId('count-total').textContent()).toBe('1000');
    const count = (label: string) => page.locator(`[data-count="${label}"]`).textContent();
    // per 1,000 DAGs: 100 end in 3 (failed), 50 in 7 of every 20 (cancelled), the rest finished
    expect([
      await count('finished'),
      await count('failed'),
      await count('cancelled'),
      await count('running'),
    ]).toEqual(['850', '100', '50', '0']);
    // one row per DAG, the first 40 drawn, each with its one run of the day
    const rows = page.locator('.timeline .tl-row[data-dag]');
    expect(await rows.count()).toBe(40);
    expect(await rows.first().getAttribute('data-dag')).toBe('dag-0000');
    expect(await page.locator('.timeline .tl-bar[data-run="run-02"]').count()).toBe(40);
    expect(await page.locator('.timeline').textContent()).toContain('and 960 more DAGs');
    expect(await page.getByText(/Showing the newest/).count()).toBe(0); // all 1,000 are there
    await b.shot('14-dashboard-10000-runs');
    // the day before has its own 1,000
    await page.getByRole('button', { name: 'Earlier' }).click();
    await expect.poll(() => page.locator('.timeline .tl-bar[data-run="run-01"]').count()).toBe(40);
    expect(await page.getByTestId('count-total').textContent()).toBe('1000');
  });

  it('opens the runs of a count, and pages through the 10,000', async () => {
    const { page } = b;
    const day = dayOf(2);
    await page.goto(`${server.url}/?from=${day}&to=${day}`);
    await page.locator('.dash-count', { hasText: 'failed' }).click();
    await page.waitForURL(/\/runs\?/);
    await expect.poll(() => page.getByTestId('total').textContent()).toBe('100 runs');
    const failed = await rowIds();
    expect(failed).toHaveLength(50);
    expect(failed.every((r) => /^dag-\d\d\d3\/run-02$/.test(r))).toBe(true);

    await page.goto(`${server.url}/runs`);
    await expect.poll(() => page.getByTestId('total').textContent()).toBe('10000 runs');
    const pager = page.getByRole('navigation', { name: 'Pages' });
    expect(await pager.textContent()).toContain('Page 1 of 200');
    // newest first: the last day's runs, the highest DAG number first (created 1 s apart)
    const first = await rowIds();
    expect(first[0]).toBe('dag-0999/run-09');
    expect(first[49]).toBe('dag-0950/run-09');
    await pager.getByRole('button', { name: /Next/ }).click();
    await expect.poll(rowIds).not.toEqual(first);
    const second = await rowIds();
    expect(second[0]).toBe('dag-0949/run-09');
    expect(second).toHaveLength(50);
    expect(new URL(page.url()).searchParams.get('page')).toBe('2');
    await page.goto(`${server.url}/runs?page=200`);
    await expect.poll(rowIds).toContain('dag-0000/run-00');
    expect(await pager.textContent()).toContain('Page 200 of 200');
    await b.shot('15-runs-last-page-10000');
  });
});

describe('the scale session', () => {
  it('logged no console errors', () => {
    expect(b.problems).toEqual([]);
  });
});
