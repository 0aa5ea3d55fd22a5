import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Page } from 'playwright-core';
import { callApi, untilFinal } from '../support/start-all.js';
import { openBrowser, startServer, type BrowserSession, type Server } from './harness.js';

// Every page keyboard-usable with visible focus (issue 18 item 6): Tab walks each page's controls
// and every stop must show a focus ring; the main actions (open a run, filter, start a DAG in the
// start dialog, Escape out of it) work from the keyboard alone. A real `trellis start-all`, a
// real headless Chromium; a screenshot per page in test-artifacts/web/.
vi.setConfig({ testTimeout: 90_000, hookTimeout: 60_000 });

const DAGS: Record<string, string> = {
  greet: `params:
  - WHO: world
schedule: "0 3 * * *"
steps:
  - name: hello
    command: echo hello \${WHO}
  - name: bye
    command: echo bye
    depends: [hello]
`,
  other: 'tags: [etl]\nsteps:\n  - echo other\n',
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
  const r = await callApi(base, 'POST', '/dags/greet/start', { dagRunId: 'r1' });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  await untilFinal(base, 'greet', 'r1');
});

afterAll(async () => {
  await b?.close();
  await server?.stop();
});

interface Stop {
  readonly what: string;
  /** Drawn with an outline or a focus ring shadow. */
  readonly ring: boolean;
  /** Tab came round to an element of this walk. */
  readonly again: boolean;
  /** Tab stayed on the same element (a date input's day, month and year). */
  readonly same: boolean;
  readonly onBody: boolean;
}

/** Runs in the page (a string: this test is compiled without the DOM library). */
const STOP = `(() => {
  const el = document.activeElement;
  if (!el || el === document.body)
    return { what: 'BODY', ring: false, again: false, same: false, onBody: true };
  const same = window.__kbPrev === el;
  window.__kbPrev = el;
  const again = !same && window.__kbSeen.has(el);
  window.__kbSeen.add(el);
  const cs = getComputedStyle(el);
  const label = el.getAttribute('aria-label') || el.getAttribute('name') || (el.textContent ?? '').trim();
  return {
    what: el.tagName + ':' + label.slice(0, 30),
    ring: el.matches(':focus-visible') &&
      ((cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) > 0) || cs.boxShadow !== 'none'),
    again,
    same,
    onBody: false,
  };
})()`;

/** From the top of the page (where Tab starts), nothing focused. */
const FROM_TOP = `(() => {
  window.__kbSeen = new WeakSet();
  window.__kbPrev = undefined;
  document.body.tabIndex = -1;
  document.body.focus();
  document.body.removeAttribute('tabindex');
})()`;

/** Tabs through the page from its top until focus comes round (or leaves it); every stop. */
const walk = async (page: Page): Promise<Stop[]> => {
  await page.evaluate(FROM_TOP);
  const stops: Stop[] = [];
  for (let i = 0; i < 250; i++) {
    await page.keyboard.press('Tab');
    const s = await page.evaluate<Stop>(STOP);
    if (s.again || (s.onBody && stops.length > 0)) break;
    if (!s.onBody && !s.same) stops.push(s);
  }
  return stops;
};

const PAGES: readonly { path: string; ready: string; shot: string; least: number }[] = [
  { path: '/', ready: '[data-testid="count-total"]', shot: '40-keys-dashboard', least: 12 },
  { path: '/runs', ready: 'tr[data-run="r1"]', shot: '41-keys-runs', least: 12 },
  { path: '/dags', ready: 'tr[data-dag="greet"]', shot: '42-keys-dag-list', least: 10 },
  { path: '/dags/greet', ready: 'h1', shot: '43-keys-dag', least: 10 },
  { path: '/runs/greet/r1', ready: '.badge', shot: '44-keys-run', least: 8 },
  { path: '/new-dag', ready: 'textarea', shot: '45-keys-new-dag', least: 7 },
  { path: '/queues', ready: '[data-queue="batch"], h1', shot: '46-keys-queues', least: 6 },
  { path: '/workers', ready: 'h1', shot: '47-keys-workers', least: 6 },
];

describe('every page, Tab by Tab', () => {
  for (const p of PAGES)
    it(`${p.path}: every Tab stop shows a focus ring`, async () => {
      const { page } = b;
      await page.goto(`${server.url}${p.path}`);
      await page.locator(p.ready).first().waitFor();
      const stops = await walk(page);
      // the sidebar's links and the page's own controls: a walk that stopped early would pass
      // vacuously
      expect(stops.length, stops.map((s) => s.what).join(' | ')).toBeGreaterThanOrEqual(p.least);
      expect(stops[0]?.what).toBe('A:Skip to content');
      expect(stops.filter((s) => !s.ring).map((s) => s.what)).toEqual([]);
      await page.keyboard.press('Shift+Tab');
      await b.shot(p.shot);
      // Embedded mode: GET /workers answers 503 (spec), which the page explains and Chromium
      // logs; nothing else may be logged.
      const known = /503 .*\/api\/v2\/workers\)$/;
      if (p.path === '/workers') expect(b.problems.filter((x) => !known.test(x))).toEqual([]);
      else expect(b.problems).toEqual([]);
      b.problems.length = 0;
    });
});

/** Presses Tab until the focused element matches `css` (at most 120 stops). */
const tabTo = async (page: Page, css: string): Promise<void> => {
  for (let i = 0; i < 120; i++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate<boolean>(`!!document.activeElement?.matches(${JSON.stringify(css)})`))
      return;
  }
  throw new Error(`Tab never reached ${css}`);
};

const focusedMatches = (page: Page, css: string) =>
  page.evaluate<boolean>(`!!document.activeElement?.matches(${JSON.stringify(css)})`);

describe('the main actions, keyboard only', () => {
  it('filters the runs and opens a run', async () => {
    const { page } = b;
    await page.goto(`${server.url}/runs`);
    await page.locator('tr[data-run="r1"]').waitFor();
    await tabTo(page, 'select[name="status"]');
    // a select takes arrow keys: down to "failed" leaves no run of greet's
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    const chosen = await page.locator('select[name="status"]').inputValue();
    expect(chosen).toBe('2');
    await tabTo(page, 'button[type="submit"]');
    await page.keyboard.press('Enter');
    await expect.poll(() => new URL(page.url()).searchParams.get('status')).toBe(chosen);
    await page.goto(`${server.url}/runs?status=4`);
    await page.locator('tr[data-run="r1"]').waitFor();
    await tabTo(page, 'tr[data-run="r1"] a[href$="/runs/greet/r1"]');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/runs\/greet\/r1$/);
    expect(b.problems).toEqual([]);
  });

  it('opens the start dialog, leaves it with Escape (focus back on Start), and starts a run', async () => {
    const { page } = b;
    await page.goto(`${server.url}/dags/greet`);
    await page.getByRole('button', { name: 'Start', exact: true }).waitFor();
    await tabTo(page, 'button.primary');
    expect(await page.evaluate<string>('document.activeElement.textContent')).toBe('Start');
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    // focus is inside the dialog, and Tab stays there (modal)
    for (let i = 0; i < 8; i++) {
      await page.keyboard.press('Tab');
      expect(await focusedMatches(page, 'dialog *')).toBe(true);
    }
    await b.shot('48-keys-start-dialog');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    expect(await page.evaluate<string>('document.activeElement?.textContent ?? ""')).toBe('Start');
    expect(await focusedMatches(page, ':focus-visible')).toBe(true);

    await page.keyboard.press('Enter');
    await dialog.waitFor();
    await tabTo(page, 'dialog input[name="param-WHO"]');
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.type('keys');
    await tabTo(page, 'dialog button.primary');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/runs\/greet\/[^/]+$/);
    const id = decodeURIComponent(new URL(page.url()).pathname.split('/').pop() ?? '');
    const run = await untilFinal(base, 'greet', id);
    expect(JSON.stringify(run.params)).toContain('keys');
    expect(b.problems).toEqual([]);
  });
});
