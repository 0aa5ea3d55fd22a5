import { once } from 'node:events';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { freePort, openBrowser, startServer, type BrowserSession, type Server } from './harness.js';

// A real server and browser on a 2-core CI machine: steps wait for events, with room to spare.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

/*
 * OpenID Connect sign-in against a real provider (oidc-provider, started here on loopback):
 * authorization code flow with PKCE required by the provider, roles from a claim, the
 * allowed-users list, and the signed session cookie the API accepts.
 */

const ACCOUNTS: Record<string, string[]> = {
  alice: ['trellis-operators'],
  bob: [],
  mallory: ['admin'],
};

let provider: HttpServer;
let issuer: string;
let server: Server;
let b: BrowserSession;

beforeAll(async () => {
  provider = createServer();
  provider.listen(0, '127.0.0.1');
  await once(provider, 'listening');
  issuer = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
  const trellisPort = await freePort();
  const op = new Provider(issuer, {
    clients: [
      {
        client_id: 'trellis-ui',
        client_secret: 'a-client-secret-for-tests',
        redirect_uris: [`http://127.0.0.1:${trellisPort}/auth/oidc/callback`],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    pkce: { required: () => true },
    scopes: ['openid', 'email', 'roles'],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], roles: ['roles'] },
    conformIdTokenClaims: false,
    cookies: { keys: ['a-cookie-key-for-tests'] },
    findAccount: (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: () => ({
        sub: id,
        email: `${id}@example.com`,
        email_verified: true,
        roles: ACCOUNTS[id] ?? [],
      }),
    }),
  });
  provider.on('request', op.callback());
  const config = `auth:
  oidc:
    issuer: ${issuer}
    clientId: trellis-ui
    clientSecret: a-client-secret-for-tests
    scopes: [openid, email, roles]
    allowedUsers: [alice@example.com, bob@example.com]
    roleMap:
      trellis-operators: operator
`;
  [server, b] = await Promise.all([
    startServer({ hello: 'steps:\n  - echo hello\n' }, config, trellisPort),
    openBrowser(),
  ]);
});

afterAll(async () => {
  await b?.close();
  await server?.stop();
  provider?.closeAllConnections();
  await new Promise((resolve) => provider?.close(resolve));
});

/** Signs in at the provider's own login and consent pages. */
const signIn = async (user: string) => {
  const { page } = b;
  // a fresh provider session each time, so its login page asks who signs in
  await b.context.clearCookies({ domain: '127.0.0.1', path: '/' });
  await page.getByRole('link', { name: 'Sign in with OpenID Connect' }).click();
  await page.waitForURL((u) => u.origin === issuer);
  await page.locator('input[name="login"]').fill(user);
  await page.locator('input[name="password"]').fill('any-password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
};

const trellisProblems = () => b.problems.filter((p) => p.includes(server.url));

describe('OpenID Connect sign-in', () => {
  it('offers only the OIDC sign-in when no users or tokens are configured', async () => {
    const { page } = b;
    await page.goto(`${server.url}/dags/hello`);
    await page.getByRole('link', { name: 'Sign in with OpenID Connect' }).waitFor();
    expect(await page.getByLabel('Password').count()).toBe(0);
    // the API itself refuses callers without the session
    expect((await fetch(`${server.url}/api/v2/dags`)).status).toBe(401);
    await b.shot('30-oidc-login');
  });

  it('signs alice in with the role her claim maps to, back on the page she asked for', async () => {
    const { page } = b;
    await signIn('alice');
    await page.waitForURL(`${server.url}/dags/hello`);
    await page.getByRole('heading', { name: 'hello' }).waitFor();
    expect(await page.locator('.user').textContent()).toContain('alice@example.com');
    expect(await page.locator('.user').textContent()).toContain('operator');
    await expect
      .poll(() => page.getByRole('button', { name: 'Start', exact: true }).isEnabled())
      .toBe(true);
    expect(await page.getByRole('button', { name: 'Rename' }).isDisabled()).toBe(true);
    const session = await b.context.request.get(`${server.url}/auth/session`);
    expect(await session.json()).toEqual({
      authenticated: true,
      name: 'alice@example.com',
      role: 'operator',
      permissions: ['read', 'runs:write'],
      via: 'oidc',
    });
    // the session cookie is signed, HttpOnly and not readable by scripts
    const cookies = await b.context.cookies(server.url);
    const c = cookies.find((x) => x.name === 'trellis_session');
    expect(c?.httpOnly).toBe(true);
    expect(await page.evaluate('document.cookie')).not.toContain('trellis_session');
    await b.shot('31-oidc-signed-in');
  });

  it('refuses a forged session cookie', async () => {
    const c = (await b.context.cookies(server.url)).find((x) => x.name === 'trellis_session');
    const [body, sig] = (c?.value ?? '').split('.');
    const forged = Buffer.from(
      JSON.stringify({ name: 'alice@example.com', role: 'admin', exp: 4102444800 }),
    ).toString('base64url');
    const res = await fetch(`${server.url}/api/v2/dags`, {
      headers: { Cookie: `trellis_session=${forged}.${sig ?? ''}` },
    });
    expect(res.status).toBe(401);
    expect(body).not.toBe(forged);
  });

  it('signs out, and gives bob (no role claim) the default viewer role', async () => {
    const { page } = b;
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('link', { name: 'Sign in with OpenID Connect' }).waitFor();
    await signIn('bob');
    await page.locator('.user').filter({ hasText: 'bob@example.com' }).waitFor();
    expect(await page.locator('.user').textContent()).toContain('viewer');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('link', { name: 'Sign in with OpenID Connect' }).waitFor();
  });

  it('refuses a user who is not in allowedUsers', async () => {
    const { page } = b;
    await signIn('mallory');
    await page.getByRole('heading', { name: 'No permission' }).waitFor();
    expect(await page.textContent('body')).toContain(
      'mallory@example.com may not use this Trellis',
    );
    await b.shot('32-oidc-not-allowed');
    const session = await b.context.request.get(`${server.url}/auth/session`);
    expect(((await session.json()) as { authenticated: boolean }).authenticated).toBe(false);
  });

  it('logged no console errors on Trellis pages', () => {
    expect(
      trellisProblems().filter((p) => !p.includes('status of 401') && !p.includes('status of 403')),
    ).toEqual([]);
  });
});
