import supertest from 'supertest';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigSchema, type ConfigInput } from '@trellis/core';
import { FakeClock } from '@trellis/testkit';
import { createAuthenticator } from '../auth/create-authenticator.js';
import { createMetrics } from '../metrics/create-metrics.js';
import type { OpenApiDocument } from '../openapi/openapi-document.js';
import { ErrorBody, HealthResponse } from '@trellis/contract';
import { noAuth, type Authenticator } from './auth.js';
import { createHttpApp } from './create-http-app.js';
import { defineRoutes } from './define-routes.js';
import type { HttpDeps } from './deps.js';

/** The error body of a response, checked against the spec's shape. */
const errorOf = (res: { body: unknown }) => ErrorBody.parse(res.body);

/** A port the routes under test never touch: any use fails the test loudly. */
const unused = <T extends object>(what: string): T =>
  new Proxy({} as T, {
    get: (_target, key) => {
      throw new Error(`${what}.${String(key)} is not used by this test`);
    },
  });

const testDeps = (over: Partial<HttpDeps> = {}): HttpDeps => ({
  version: '1.2.3',
  startedAt: new Date('2026-01-02T03:00:00.000Z'),
  clock: new FakeClock('2026-01-02T03:04:05.000Z'),
  dags: unused('dags'),
  runs: unused('runs'),
  reads: unused('reads'),
  auth: noAuth,
  log: { warn: () => undefined, error: () => undefined },
  health: () => Promise.resolve({}),
  metrics: () => Promise.resolve({ contentType: 'text/plain; version=0.0.4', body: 'svc_x 1\n' }),
  ...over,
});

/** One route per permission, and a POST with a validated body. */
const probeRoutes = defineRoutes<HttpDeps>((r) => [
  r.get('/probe/read', { handler: () => Promise.resolve({ status: 200, body: { ok: 'read' } }) }),
  r.post('/probe/dags', {
    permission: 'dags:write',
    handler: () => Promise.resolve({ status: 200, body: { ok: 'dags:write' } }),
  }),
  r.post('/probe/runs', {
    permission: 'runs:write',
    body: z.object({ name: z.string() }),
    handler: ({ body }) =>
      Promise.resolve({ status: 200, body: { ok: 'runs:write', name: body.name } }),
  }),
]);

const authFrom = (auth: ConfigInput['auth']): Authenticator =>
  createAuthenticator(ConfigSchema.parse({ home: '/h', auth }).auth);

const USERS = (['admin', 'manager', 'operator', 'viewer'] as const).map((role) => ({
  name: `${role}-user`,
  password: `${role}-pw`,
  role,
}));
const TOKENS = [{ name: 'ci', token: 'ci-token', role: 'operator' as const }];

const basicHeader = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

const appWith = (auth: Authenticator, over: Partial<HttpDeps> = {}) =>
  supertest(createHttpApp(testDeps({ auth, ...over }), [probeRoutes]));

describe('GET /api/v2/health', () => {
  it('answers 200 healthy with version, uptime in whole seconds and the time', async () => {
    const res = await supertest(createHttpApp(testDeps())).get('/api/v2/health');
    expect(res.status).toBe(200);
    expect(HealthResponse.parse(res.body)).toEqual({
      status: 'healthy',
      version: '1.2.3',
      uptime: 245,
      timestamp: '2026-01-02T03:04:05.000Z',
    });
  });

  it('answers 503 unhealthy with the failing part in error', async () => {
    const health = () => Promise.resolve({ error: 'the scheduler is not responding' });
    const res = await supertest(createHttpApp(testDeps({ health }))).get('/api/v2/health');
    expect(res.status).toBe(503);
    expect(HealthResponse.parse(res.body)).toMatchObject({
      status: 'unhealthy',
      error: 'the scheduler is not responding',
    });
  });

  it('is public with authentication on', async () => {
    const res = await appWith(authFrom({ users: USERS })).get('/api/v2/health');
    expect(res.status).toBe(200);
  });
});

describe('GET /api/v2/metrics', () => {
  const metrics = createMetrics({
    version: '1.2.3',
    buildDate: '2026-01-01',
    clock: new FakeClock('2026-01-02T03:04:05.000Z'),
    startedAt: new Date('2026-01-02T03:00:00.000Z'),
    sources: {
      runningRuns: () => 2,
      queuedRuns: () => ({ q: 1 }),
      dagCount: () => 7,
      schedulerRunning: () => true,
    },
  });

  it('answers the text exposition format with the svc_* metrics', async () => {
    const res = await supertest(createHttpApp(testDeps({ metrics: metrics.render }))).get(
      '/api/v2/metrics',
    );
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.text).toContain('svc_info{version="1.2.3",build_date="2026-01-01"');
    expect(res.text).toMatch(/^svc_dags_total 7$/m);
    expect(res.text).toMatch(/^process_cpu_user_seconds_total /m);
  });

  it('is public by default, even with authentication on', async () => {
    const res = await appWith(authFrom({ users: USERS })).get('/api/v2/metrics');
    expect(res.status).toBe(200);
  });

  it('needs credentials when configured private', async () => {
    const app = appWith(authFrom({ users: USERS }), { metricsPrivate: true });
    const refused = await app.get('/api/v2/metrics');
    expect(refused.status).toBe(401);
    expect(ErrorBody.parse(refused.body).code).toBe('unauthorized');
    const allowed = await app
      .get('/api/v2/metrics')
      .set('Authorization', basicHeader('viewer-user', 'viewer-pw'));
    expect(allowed.status).toBe(200);
  });
});

describe('authentication', () => {
  describe('in basic mode', () => {
    const app = appWith(authFrom({ mode: 'basic', users: USERS, tokens: TOKENS }));

    it('answers 401 with a Basic challenge when credentials are missing', async () => {
      const res = await app.get('/api/v2/probe/read');
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Basic realm="trellis"');
      expect(ErrorBody.parse(res.body)).toMatchObject({ code: 'unauthorized' });
      expect(errorOf(res).message).toContain('authentication required');
    });

    it('answers 401 for a wrong password, without echoing it', async () => {
      const res = await app
        .get('/api/v2/probe/read')
        .set('Authorization', basicHeader('viewer-user', 'guess-123'));
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Basic realm="trellis"');
      expect(res.body).toEqual({ code: 'unauthorized', message: 'invalid user name or password' });
    });

    it('answers 401 for an unknown user and for a scheme that is neither Basic nor Bearer', async () => {
      for (const header of [basicHeader('nobody', 'viewer-pw'), 'Digest abc', 'ci-token']) {
        const res = await app.get('/api/v2/probe/read').set('Authorization', header);
        expect(res.status, header).toBe(401);
        expect(JSON.stringify(res.body)).not.toContain('ci-token');
      }
    });

    it('accepts a valid user and a configured bearer token as well', async () => {
      const asUser = await app
        .get('/api/v2/probe/read')
        .set('Authorization', basicHeader('viewer-user', 'viewer-pw'));
      expect(asUser.body).toEqual({ ok: 'read' });
      const asToken = await app.get('/api/v2/probe/read').set('Authorization', 'Bearer ci-token');
      expect(asToken.body).toEqual({ ok: 'read' });
    });
  });

  describe('in bearer mode', () => {
    const app = appWith(authFrom({ mode: 'bearer', tokens: TOKENS }));

    it('answers 401 with a Bearer challenge for a missing or wrong token', async () => {
      for (const header of [undefined, 'Bearer wrong-token', 'Bearer ']) {
        const req = app.get('/api/v2/probe/read');
        const res = await (header === undefined ? req : req.set('Authorization', header));
        expect(res.status, String(header)).toBe(401);
        expect(res.headers['www-authenticate']).toBe('Bearer realm="trellis"');
        expect(errorOf(res).code).toBe('unauthorized');
      }
    });

    it('accepts the configured token', async () => {
      const res = await app.get('/api/v2/probe/read').set('Authorization', 'Bearer ci-token');
      expect(res.status).toBe(200);
    });
  });

  describe('permissions', () => {
    const app = appWith(authFrom({ users: USERS }));
    const allowed: Record<string, readonly string[]> = {
      admin: ['read', 'dags:write', 'runs:write'],
      manager: ['read', 'dags:write', 'runs:write'],
      operator: ['read', 'runs:write'],
      viewer: ['read'],
    };
    const requests = [
      ['read', 'reading', () => app.get('/api/v2/probe/read')],
      ['dags:write', 'editing DAGs', () => app.post('/api/v2/probe/dags')],
      ['runs:write', 'running DAGs', () => app.post('/api/v2/probe/runs').send({ name: 'x' })],
    ] as const;
    const cases = USERS.flatMap((u) =>
      requests.map(([permission, words, send]) => ({ u, permission, words, send })),
    );

    it.each(cases.map((c) => [c.u.role, c.permission, c] as const))(
      '%s on a %s route',
      async (_r, _p, c) => {
        const res = await c.send().set('Authorization', basicHeader(c.u.name, c.u.password));
        if (allowed[c.u.role]?.includes(c.permission)) {
          expect(res.status).toBe(200);
          expect((res.body as { ok: string }).ok).toBe(c.permission);
        } else {
          expect(res.status).toBe(403);
          expect(ErrorBody.parse(res.body)).toMatchObject({
            code: 'forbidden',
            details: { permission: c.permission },
          });
          expect(errorOf(res).message).toContain(
            `${c.u.name} (role ${c.u.role}) may not do this: ${c.words}`,
          );
        }
      },
    );
  });
});

describe('errors and routing', () => {
  const app = appWith(noAuth);

  it('answers 404 naming /api/v2 for any /api/v1 path', async () => {
    const res = await app.get('/api/v1/dags');
    expect(res.status).toBe(404);
    expect(ErrorBody.parse(res.body).code).toBe('not_found');
    expect(errorOf(res).message).toContain('use /api/v2');
  });

  it('answers a JSON 404 for an unknown API path', async () => {
    const res = await app.get('/api/v2/no-such-thing');
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      code: 'not_found',
      message: 'no such endpoint: GET /api/v2/no-such-thing',
    });
  });

  it('answers 400 bad_request for a malformed JSON body', async () => {
    const res = await app
      .post('/api/v2/probe/runs')
      .set('Content-Type', 'application/json')
      .send('{"name": ');
    expect(res.status).toBe(400);
    expect(ErrorBody.parse(res.body).code).toBe('bad_request');
    expect(errorOf(res).message).toMatch(/^malformed JSON body/);
  });

  it('answers 400 bad_request naming the field for a body that fails its schema', async () => {
    const res = await app.post('/api/v2/probe/runs').send({ name: 5 });
    expect(res.status).toBe(400);
    expect(errorOf(res).message).toMatch(/^invalid body: name: /);
    expect(errorOf(res).details).toEqual({
      issues: [{ path: 'name', message: expect.any(String) as unknown }],
    });
  });

  it('serves under basePath', async () => {
    const res = await supertest(createHttpApp(testDeps(), [], { basePath: '/trellis' })).get(
      '/trellis/api/v2/health',
    );
    expect(res.status).toBe(200);
  });
});

describe('remoteNode', () => {
  const remoteNodes = [
    { name: 'prod', apiBaseURL: 'http://127.0.0.1:1/api/v2', skipTLSVerify: false, timeoutSec: 1 },
  ];
  const app = supertest(createHttpApp(testDeps(), [probeRoutes], { remoteNodes }));

  it('answers 400 naming an unknown node and the configured ones', async () => {
    const res = await app.get('/api/v2/probe/read?remoteNode=staging');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 'bad_request',
      message:
        'unknown remote node "staging": the configured ones are "prod" (remoteNode=local means this server)',
      details: { remoteNode: 'staging', configured: ['prod'] },
    });
  });

  it('serves remoteNode=local and an empty remoteNode here', async () => {
    for (const q of ['remoteNode=local', 'remoteNode=']) {
      const res = await app.get(`/api/v2/probe/read?${q}`);
      expect(res.body, q).toEqual({ ok: 'read' });
    }
  });
});

describe('GET /api/v2/openapi.json', () => {
  it('is public and documents the mounted routes, itself included', async () => {
    const res = await appWith(authFrom({ users: USERS })).get('/api/v2/openapi.json');
    expect(res.status).toBe(200);
    const doc = res.body as OpenApiDocument;
    expect(doc.openapi).toBe('3.0.0');
    expect(doc.info.version).toBe('1.2.3');
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/api/v2/health',
      '/api/v2/metrics',
      '/api/v2/openapi.json',
      '/api/v2/probe/dags',
      '/api/v2/probe/read',
      '/api/v2/probe/runs',
    ]);
  });
});
