import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openBrowser, startServer, type BrowserSession, type Server } from './harness.js';

// A real server and browser on a 2-core CI machine: room to spare.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

/** 1,000 DAG files: the list pages on the server, so each page stays 50 rows. */
const DAGS: Record<string, string> = Object.fromEntries(
  Array.from({ length: 1000 }, (_, i) => {
    const name = `dag-${String(i).padStart(4, '0')}`;
    const tag = i % 10 === 0 ? 'tens' : 'other';
    return [name, `description: number ${i}\ntags: [${tag}]\nsteps:\n  - echo ${i}\n`];
  }),
);

let server: Server;
let b: BrowserSession;

beforeAll(async () => {
  [server, b] = await Promise.all([startServer(DAGS), openBrowser()]);
});

afterAll(async () => {
  await b?.close();
  await server?.stop();
});

describe('the DAG list with 1,000 DAGs', () => {
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
