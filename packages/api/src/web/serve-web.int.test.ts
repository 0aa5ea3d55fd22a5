import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigSchema, type ConfigInput } from '@trellis/core';
import { FakeClock } from '@trellis/testkit';
import { createAuthenticator } from '../auth/create-authenticator.js';
import { noAuth, type Authenticator } from '../http/auth.js';
import { createHttpApp } from '../http/create-http-app.js';
import type { HttpDeps } from '../http/deps.js';

/** A port these routes never touch. */
const unused = <T extends object>(what: string): T =>
  new Proxy({} as T, {
    get: (_t, key) => {
      throw new Error(`${what}.${String(key)} is not used by this test`);
    },
  });

const deps = (auth: Authenticator = noAuth): HttpDeps => ({
  version: '9.8.7',
  startedAt: new Date('2026-01-02T03:00:00.000Z'),
  clock: new FakeClock('2026-01-02T03:04:05.000Z'),
  dags: unused('dags'),
  runs: unused('runs'),
  reads: unused('reads'),
  auth,
  log: { warn: () => undefined, error: () => undefined },
  health: () => Promise.resolve({}),
  metrics: () => Promise.resolve({ contentType: 'text/plain', body: '' }),
});

const authFrom = (auth: ConfigInput['auth']): Authenticator =>
  createAuthenticator(ConfigSchema.parse({ home: '/h', auth }).auth);

let root: string;
beforeAll(() => {
  // a build as Vite lays it out: index.html with the config marker, hashed assets
  root = mkdtempSync(join(tmpdir(), 'trellis-web-root-'));
  mkdirSync(join(root, 'assets'));
  writeFileSync(
    join(root, 'index.html'),
    '<!doctype html><html><head><!--trellis:config--><script type="module" src="./assets/app-1a2b3c.js"></script></head><body><div id="root"></div></body></html>',
  );
  writeFileSync(join(root, 'assets', 'app-1a2b3c.js'), 'console.log("app")');
  writeFileSync(join(root, 'favicon.svg'), '<svg/>');
  // what packages/web/vite.config.ts leaves beside a bundle
  const big = `console.log(${JSON.stringify('x'.repeat(4000))})`;
  writeFileSync(join(root, 'assets', 'big-9f8e7d.js'), big);
  writeFileSync(join(root, 'assets', 'big-9f8e7d.js.br'), brotliCompressSync(big));
  writeFileSync(join(root, 'assets', 'big-9f8e7d.js.gz'), gzipSync(big));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const bootOf = (html: string): Record<string, unknown> => {
  const m = /window\.__TRELLIS__=(.*?);<\/script>/.exec(html);
  if (!m?.[1]) throw new Error(`no boot config in ${html}`);
  return JSON.parse(m[1]) as Record<string, unknown>;
};

describe('the web UI served by createHttpApp', () => {
  it('serves index.html at / and at client routes, no-cache, with the boot config', async () => {
    const app = createHttpApp(deps(), [], { web: { root, authMode: 'none' } });
    for (const path of ['/', '/dags/etl', '/runs/etl/01abc/children/02def']) {
      const res = await supertest(app).get(path).expect(200);
      expect(res.headers['content-type']).toMatch(/text\/html/);
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.text).toContain('<base href="/" />');
      expect(bootOf(res.text)).toEqual({
        basePath: '',
        apiBase: '/api/v2',
        authMode: 'none',
        oidc: false,
        passwordLogin: false,
        version: '9.8.7',
      });
    }
  });

  it('caches hashed assets for a year and answers 404 for a missing one', async () => {
    const app = createHttpApp(deps(), [], { web: { root, authMode: 'none' } });
    const res = await supertest(app).get('/assets/app-1a2b3c.js').expect(200);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.text).toBe('console.log("app")');
    await supertest(app).get('/assets/app-gone.js').expect(404);
    const other = await supertest(app).get('/favicon.svg').expect(200);
    expect(other.headers['cache-control']).toBe('no-cache');
  });

  it('keeps the API answering JSON, its 404s included', async () => {
    const app = createHttpApp(deps(), [], { web: { root, authMode: 'none' } });
    await supertest(app).get('/api/v2/health').expect(200);
    const res = await supertest(app).get('/api/v2/nope').expect(404);
    expect(res.body).toMatchObject({ code: 'not_found' });
  });

  it('serves under a base path, and the root redirects there', async () => {
    const app = createHttpApp(deps(), [], {
      basePath: '/trellis',
      web: { root, authMode: 'basic' },
    });
    const res = await supertest(app).get('/trellis/dags/x').expect(200);
    expect(res.text).toContain('<base href="/trellis/" />');
    expect(bootOf(res.text)).toMatchObject({ basePath: '/trellis', apiBase: '/trellis/api/v2' });
    await supertest(app).get('/trellis/assets/app-1a2b3c.js').expect(200);
    await supertest(app).get('/').expect(302).expect('Location', '/trellis/');
    await supertest(app).get('/trellis/api/v2/health').expect(200);
  });

  it('answers GET /metrics with the metrics, never the UI, under a base path too', async () => {
    const exposition = {
      contentType: 'text/plain; version=0.0.4; charset=utf-8',
      body: 'svc_x 1\n',
    };
    const metricsDeps = { ...deps(), metrics: () => Promise.resolve(exposition) };
    for (const basePath of ['', '/trellis']) {
      const app = createHttpApp(metricsDeps, [], { basePath, web: { root, authMode: 'none' } });
      const res = await supertest(app).get(`${basePath}/metrics`).expect(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(res.text).toBe('svc_x 1\n');
    }
  });

  it('keeps the rules of /api/v2/metrics at /metrics: credentials when configured private', async () => {
    const auth = authFrom({ users: [{ name: 'v', password: 'pw', role: 'viewer' }] });
    const app = createHttpApp({ ...deps(auth), metricsPrivate: true }, [], {
      web: { root, authMode: 'basic' },
    });
    const refused = await supertest(app).get('/metrics').expect(401);
    expect(refused.body).toMatchObject({ code: 'unauthorized' });
    await supertest(app).get('/metrics').auth('v', 'pw').expect(200);
  });

  it('serves no UI without web options (server.headless)', async () => {
    const app = createHttpApp(deps(), [], {});
    await supertest(app).get('/').expect(404);
    await supertest(app).get('/dags/x').expect(404);
  });

  it('answers 503 naming the fix when the UI is not built', async () => {
    const app = createHttpApp(deps(), [], {
      web: { root: join(root, 'missing'), authMode: 'none' },
    });
    const res = await supertest(app).get('/').expect(503);
    expect(res.text).toContain('pnpm build');
    expect(res.text).toContain('server.headless');
  });

  it('tells the UI who the caller is without a 401 challenge', async () => {
    const auth = authFrom({
      users: [{ name: 'vic', password: 'pw', role: 'viewer' }],
      tokens: [{ name: 'ci', token: 'tok', role: 'operator' }],
    });
    const app = createHttpApp(deps(auth), [], { web: { root, authMode: 'basic' } });
    const anon = await supertest(app).get('/auth/session').expect(200);
    expect(anon.headers['www-authenticate']).toBeUndefined();
    expect(anon.body).toMatchObject({ authenticated: false, permissions: [] });
    const bad = await supertest(app).get('/auth/session').auth('vic', 'nope').expect(200);
    expect(bad.body).toMatchObject({
      authenticated: false,
      message: 'invalid user name or password',
    });
    const vic = await supertest(app).get('/auth/session').auth('vic', 'pw').expect(200);
    expect(vic.body).toEqual({
      authenticated: true,
      name: 'vic',
      role: 'viewer',
      permissions: ['read'],
      via: 'basic',
    });
    const ci = await supertest(app)
      .get('/auth/session')
      .set('Authorization', 'Bearer tok')
      .expect(200);
    expect(ci.body).toMatchObject({
      role: 'operator',
      permissions: ['read', 'runs:write'],
      via: 'bearer',
    });
  });

  it('escapes the boot config so it cannot close the script', async () => {
    const app = createHttpApp(deps(), [], {
      basePath: '/a</script><b',
      web: { root, authMode: 'none' },
    });
    const res = await supertest(app)
      .get('/a</script><b/')
      .expect((r) => expect([200, 404]).toContain(r.status));
    expect(res.text).not.toContain('</script><b');
  });

  it('sends a precompressed asset the browser accepts, with its type, Vary and the year cache', async () => {
    const app = createHttpApp(deps(), [], { web: { root, authMode: 'none' } });
    const br = await supertest(app)
      .get('/assets/big-9f8e7d.js')
      .set('Accept-Encoding', 'gzip, deflate, br')
      .expect(200);
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers['content-type']).toMatch(/javascript/);
    expect(br.headers.vary).toBe('Accept-Encoding');
    expect(br.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(br.text).toContain('xxxx'); // supertest decompresses brotli too
    const gz = await supertest(app)
      .get('/assets/big-9f8e7d.js')
      .set('Accept-Encoding', 'gzip, br;q=0')
      .expect(200);
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.text).toContain('xxxx'); // supertest inflates gzip
    const plain = await supertest(app)
      .get('/assets/big-9f8e7d.js')
      .set('Accept-Encoding', 'identity')
      .expect(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toBe('Accept-Encoding');
    // a file too small to have been compressed goes out as it is
    const small = await supertest(app)
      .get('/assets/app-1a2b3c.js')
      .set('Accept-Encoding', 'br')
      .expect(200);
    expect(small.headers['content-encoding']).toBeUndefined();
  });
});
