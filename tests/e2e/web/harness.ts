import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { ROOT, startAll } from '../support/start-all.js';

export { ROOT };

/*
 * Browser tests of the web UI: the built `trellis start-all` on a free loopback port, driven by
 * Debian's headless Chromium through playwright-core (scripts/setup.sh installs it). Screenshots
 * land in test-artifacts/web/ (gitignored).
 */

export const ARTIFACTS = join(ROOT, 'test-artifacts', 'web');
const CHROMIUM = '/usr/lib/chromium/chromium';

export interface Server {
  readonly url: string;
  readonly home: string;
  stop(): Promise<void>;
}

/** A free loopback port (for a server whose URL must be known before it starts). */
export const freePort = async (): Promise<number> => {
  const srv = createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const { port } = srv.address() as AddressInfo;
  await new Promise((resolve) => srv.close(resolve));
  return port;
};

/** Starts `trellis start-all` with these DAG files and config.yaml text. */
export const startServer = async (
  dags: Record<string, string>,
  configYaml = '',
  port = 0,
  extra: {
    readonly args?: readonly string[];
    readonly env?: Record<string, string>;
    /** Writes more into the home (run history) before the server starts. */
    readonly seed?: (home: string) => void;
  } = {},
): Promise<Server> => {
  const home = mkdtempSync(join(tmpdir(), 'trellis-e2e-web-'));
  mkdirSync(join(home, 'dags'));
  for (const [name, yaml] of Object.entries(dags))
    writeFileSync(join(home, 'dags', `${name}.yaml`), yaml);
  if (configYaml) writeFileSync(join(home, 'config.yaml'), configYaml);
  extra.seed?.(home);
  const server = await startAll(
    { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, SVC_HOME: home, ...extra.env },
    ['--port', String(port), ...(extra.args ?? [])],
  );
  return {
    url: server.url,
    home,
    stop: async () => {
      await server.stop();
      rmSync(home, { recursive: true, force: true });
    },
  };
};

export interface BrowserSession {
  readonly browser: Browser;
  readonly context: BrowserContext;
  readonly page: Page;
  /** Console errors and uncaught exceptions seen so far. */
  readonly problems: string[];
  shot(name: string): Promise<void>;
  close(): Promise<void>;
}

export const openBrowser = async (width = 1280, height = 860): Promise<BrowserSession> => {
  mkdirSync(ARTIFACTS, { recursive: true });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
  const context = await browser.newContext({ viewport: { width, height } });
  // Test traffic stays on loopback: anything else (a provider page's web font) is refused.
  await context.route(
    (url) => !['127.0.0.1', 'localhost'].includes(url.hostname),
    (route) => route.abort(),
  );
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()} (${m.location().url})`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  return {
    browser,
    context,
    page,
    problems,
    shot: async (name) => {
      await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
    },
    close: () => browser.close(),
  };
};
