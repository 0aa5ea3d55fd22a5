import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openBrowser, startServer, type BrowserSession, type Server } from './harness.js';

// A real server and browser on a 2-core CI machine: steps wait for events, with room to spare.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const CONFIG = `auth:
  mode: basic
  users:
    - name: alice
      password: alice-secret
      role: admin
    - name: victor
      password: victor-secret
      role: viewer
  tokens:
    - name: ci-pipeline
      token: operator-token-123
      role: operator
`;

let server: Server;
let b: BrowserSession;

beforeAll(async () => {
  [server, b] = await Promise.all([
    startServer({ hello: 'description: Says hello\nsteps:\n  - echo hello\n' }, CONFIG),
    openBrowser(),
  ]);
});

afterAll(async () => {
  await b?.close();
  await server?.stop();
});

/** The browser's own 401 lines for the session checks with wrong credentials are expected. */
const unexpectedProblems = () => b.problems.filter((p) => !p.includes('status of 401'));

describe('signing in to the web UI (Basic and Bearer)', () => {
  it('asks for credentials and refuses wrong ones', async () => {
    const { page } = b;
    await page.goto(`${server.url}/dags/hello`);
    const form = page.getByRole('form', { name: 'Sign in' });
    await form.waitFor();
    await b.shot('20-login');
    await page.getByLabel('User name').fill('alice');
    await page.getByLabel('Password').fill('wrong');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Wrong user name or password' }).waitFor();
  });

  it('signs a viewer in, with run and edit controls disabled', async () => {
    const { page } = b;
    await page.getByLabel('Password').fill('victor-secret');
    await page.getByLabel('User name').fill('victor');
    await page.getByRole('button', { name: 'Sign in' }).click();
    // back on the page that was asked for
    await page.getByRole('heading', { name: 'hello' }).waitFor();
    const start = page.getByRole('button', { name: 'Start', exact: true });
    expect(await start.isDisabled()).toBe(true);
    expect(await start.getAttribute('title')).toBe('victor (role viewer) may not start runs');
    expect(await page.getByRole('button', { name: 'Delete' }).isDisabled()).toBe(true);
    expect(await page.locator('.user').textContent()).toContain('victor');
    await b.shot('21-viewer-dag-page');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('form', { name: 'Sign in' }).waitFor();
  });

  it('signs in with a Bearer token: an operator may run but not edit', async () => {
    const { page } = b;
    await page.getByRole('tab', { name: 'Access token' }).click();
    await page.getByLabel('Token').fill('operator-token-123');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'hello' }).waitFor();
    await expect
      .poll(() => page.getByRole('button', { name: 'Start', exact: true }).isEnabled())
      .toBe(true);
    expect(await page.getByRole('button', { name: 'Rename' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Start', exact: true }).click();
    await page.waitForURL(/\/runs\/hello\//);
    await page.locator('.page-head .badge[data-status="finished"]').waitFor({ timeout: 20_000 });
  });

  it('goes back to the login when the server stops accepting the credentials', async () => {
    const { page } = b;
    await page.evaluate("window.sessionStorage.setItem('trellis.authorization', 'Bearer revoked')");
    await page.getByRole('link', { name: 'DAGs' }).first().click();
    await page.getByRole('form', { name: 'Sign in' }).waitFor();
    await page.getByText('Your session has ended').waitFor();
  });

  it('logged no console errors', () => {
    expect(unexpectedProblems()).toEqual([]);
  });
});
