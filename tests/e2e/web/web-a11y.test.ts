import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Page } from 'playwright-core';
import { openBrowser, startServer, type BrowserSession, type Server } from './harness.js';

// Keyboard use and compressed assets (issue 18 item 6): a real `trellis start-all` and a real
// browser.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const DAGS: Record<string, string> = {
  greet: `params:
  - WHO: world
steps:
  - echo hello \${WHO}
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

interface Focused {
  readonly tag: string;
  readonly text: string;
  /** Matches :focus-visible. */
  readonly focusVisible: boolean;
  /** Drawn with an outline or a focus ring shadow. */
  readonly ring: boolean;
}

/** Runs in the page (a string: this test is compiled without the DOM library). */
const FOCUSED = `(() => {
  const el = document.activeElement ?? document.body;
  const cs = getComputedStyle(el);
  return {
    tag: el.tagName,
    text: (el.textContent ?? '').trim(),
    focusVisible: el.matches(':focus-visible'),
    ring: (cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) > 0) || cs.boxShadow !== 'none',
  };
})()`;

const focused = (page: Page): Promise<Focused> => page.evaluate<Focused>(FOCUSED);

/** Presses Tab until `want` matches the focused element (at most 60 stops); returns it. */
const tabTo = async (page: Page, want: (f: Focused) => boolean): Promise<Focused> => {
  const seen: string[] = [];
  for (let i = 0; i < 60; i++) {
    await page.keyboard.press('Tab');
    const f = await focused(page);
    if (want(f)) return f;
    seen.push(`${f.tag}:${f.text.slice(0, 20)}`);
  }
  throw new Error(`Tab never reached it; stops: ${seen.join(' | ')}`);
};

describe('keyboard only', () => {
  it('skips to the content, opens New DAG, and starts a run with visible focus throughout', async () => {
    const { page } = b;
    await page.goto(`${server.url}/dags`);
    await page.locator('tr[data-dag="greet"]').waitFor();
    const skip = await tabTo(page, () => true);
    expect(skip).toMatchObject({
      tag: 'A',
      text: 'Skip to content',
      focusVisible: true,
      ring: true,
    });
    const newDag = await tabTo(page, (f) => f.text === 'New DAG');
    expect(newDag).toMatchObject({ tag: 'A', focusVisible: true, ring: true });
    await b.shot('30-keyboard-focus-new-dag');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/new-dag$/);
    await page.goto(`${server.url}/dags/greet`);
    await page.getByRole('button', { name: 'Start', exact: true }).waitFor();
    const start = await tabTo(page, (f) => f.tag === 'BUTTON' && f.text === 'Start');
    expect(start).toMatchObject({ focusVisible: true, ring: true });
    await b.shot('31-keyboard-focus-start');
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog');
    await expect
      .poll(() => dialog.getByRole('textbox', { name: 'WHO' }).inputValue())
      .toBe('world');
    const field = await tabTo(page, (f) => f.tag === 'INPUT');
    expect(field.focusVisible).toBe(true);
    await page.keyboard.type(' and moon');
    const go = await tabTo(page, (f) => f.tag === 'BUTTON' && f.text === 'Start');
    expect(go).toMatchObject({ focusVisible: true, ring: true });
    await b.shot('32-keyboard-start-dialog');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/runs\/greet\//);
    expect(b.problems).toEqual([]);
  });
});

describe('compressed assets', () => {
  it('serves the JS bundle brotli- or gzip-compressed with Vary and a year cache', async () => {
    const html = await (await fetch(`${server.url}/dags`)).text();
    const js = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(js).toBeDefined();
    for (const enc of ['br', 'gzip']) {
      const res = await fetch(`${server.url}/${js}`, { headers: { 'Accept-Encoding': enc } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-encoding')).toBe(enc);
      expect(res.headers.get('vary')).toBe('Accept-Encoding');
      expect(res.headers.get('content-type')).toMatch(/javascript/);
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect((await res.text()).length).toBeGreaterThan(10_000);
    }
    const plain = await fetch(`${server.url}/${js}`, {
      headers: { 'Accept-Encoding': 'identity' },
    });
    expect(plain.headers.get('content-encoding')).toBeNull();
    // and the browser got it compressed: fewer bytes on the wire than in the file
    const { page } = b;
    await page.goto(`${server.url}/dags`);
    await page.locator('tr[data-dag="greet"]').waitFor();
    const sizes = await page.evaluate<{ encoded: number; decoded: number }[]>(`performance
      .getEntriesByType('resource')
      .filter((e) => e.name.endsWith('.js'))
      .map((e) => ({ encoded: e.encodedBodySize, decoded: e.decodedBodySize }))`);
    expect(sizes.length).toBeGreaterThan(0);
    for (const s of sizes) expect(s.encoded).toBeLessThan(s.decoded / 2);
  });
});
