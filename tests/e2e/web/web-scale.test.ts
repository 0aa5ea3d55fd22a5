import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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

/**
 * 10,000 finished runs of history, 10 per DAG, written the way the store writes them (record and
 * snapshot; the index is rebuilt on first read), as bench/util.js's writeFinishedRun does.
 */
const seedHistory = (home: string): void => {
  const t0 = Date.parse('2026-01-01T00:00:00Z');
  for (const name of Object.keys(DAGS))
    for (let i = 0; i < 10; i++) {
      const id = `run-${String(i).padStart(2, '0')}`;
      const at = new Date(t0 + i * 60_000).toISOString();
      const dir = join(home, 'data', 'runs', name, id);
      mkdirSync(dir, { recursive: true });
      const record = {
        revision: 3,
        name,
        dagRunId: id,
        root: { name, dagRunId: id },
        status: 4,
        createdAt: at,
        queuedAt: '',
        startedAt: at,
        finishedAt: at,
        log: '',
        params: [],
        nodes: [],
        preconditions: [],
        error: '',
        queue: name,
      };
      writeFileSync(join(dir, 'status.json'), JSON.stringify(record));
      writeFileSync(
        join(dir, 'dag.json'),
        JSON.stringify({ dag: { name, steps: [] }, localDags: [] }),
      );
    }
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

  it('logged no console errors', () => {
    expect(b.problems).toEqual([]);
  });
});
