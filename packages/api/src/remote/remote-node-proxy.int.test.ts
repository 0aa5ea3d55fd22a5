import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import supertest from 'supertest';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConfigSchema, type RemoteNodeConfig } from '@trellis/core';
import { FakeClock } from '@trellis/testkit';
import { createAuthenticator } from '../auth/create-authenticator.js';
import { noAuth, type Authenticator } from '../http/auth.js';
import { createHttpApp } from '../http/create-http-app.js';
import { defineRoutes } from '../http/define-routes.js';
import type { HttpDeps } from '../http/deps.js';
import { ErrorBody } from '@trellis/contract';
import { sendToRemoteNode } from './remote-transport.js';

/** The error body of a response, checked against the spec's shape. */
const errorOf = (res: { body: unknown }) => ErrorBody.parse(res.body);

/** What the fake remote node saw. */
interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
  contentType: string | undefined;
  body: string;
}

/** A real HTTP server on 127.0.0.1 playing a remote Trellis node. */
const startUpstream = async () => {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry: Seen = {
        method: req.method ?? '',
        url: req.url ?? '',
        authorization: req.headers.authorization,
        contentType: req.headers['content-type'],
        body: Buffer.concat(chunks).toString('utf8'),
      };
      seen.push(entry);
      const path = (req.url ?? '').split('?')[0];
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      };
      switch (path) {
        case '/api/v2/slow':
          return; // never answers
        case '/api/v2/dags/missing':
          return json(404, { code: 'not_found', message: 'dag not found: missing' });
        case '/api/v2/broken':
          res.writeHead(500, { 'content-type': 'text/plain' }).end('boom');
          return;
        case '/api/v2/metrics':
          res
            .writeHead(200, { 'content-type': 'text/plain; version=0.0.4' })
            .end('svc_dags_total 3\n');
          return;
        case '/api/v2/gzipped':
          res
            .writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' })
            .end(gzipSync(JSON.stringify({ zipped: true })));
          return;
        case '/api/v2/dags/x/start':
          return json(200, { dagRunId: 'remote-run-1' });
        default:
          return json(200, { echo: entry });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    seen,
    url: `http://127.0.0.1:${port}/api/v2`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};

/** A port nothing listens on: a server's, after it closed. */
const closedPort = async (): Promise<number> => {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
};

const unused = <T extends object>(what: string): T =>
  new Proxy({} as T, {
    get: (_target, key) => {
      throw new Error(`${what}.${String(key)} is not used by this test`);
    },
  });

const testDeps = (auth: Authenticator): HttpDeps => ({
  version: '1.2.3',
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

/** Local stand-ins for the real tables: each answers "local" so forwarding is visible. */
const localRoutes = defineRoutes<HttpDeps>((r) => [
  r.get('/dags/:fileName', {
    handler: () => Promise.resolve({ status: 200, body: { local: true } }),
  }),
  r.post('/dags/:fileName/start', {
    permission: 'runs:write',
    handler: () => Promise.resolve({ status: 200, body: { local: true } }),
  }),
  r.delete('/dags/:fileName', {
    permission: 'dags:write',
    handler: () => Promise.resolve({ status: 204 }),
  }),
]);

let upstream: Awaited<ReturnType<typeof startUpstream>>;
let nodes: RemoteNodeConfig[];

beforeAll(async () => {
  upstream = await startUpstream();
  const base = { skipTLSVerify: false, timeoutSec: 5 };
  nodes = [
    {
      name: 'basic',
      apiBaseURL: upstream.url,
      auth: { basic: { username: 'remote-user', password: 'remote-pw' } },
      ...base,
    },
    { name: 'token', apiBaseURL: upstream.url, auth: { token: 'remote-token' }, ...base },
    { name: 'plain', apiBaseURL: upstream.url, ...base },
    // Fractional seconds keep the timeout test short; the config schema asks for whole ones.
    { name: 'slow', apiBaseURL: upstream.url, skipTLSVerify: false, timeoutSec: 0.2 },
    { name: 'down', apiBaseURL: `http://127.0.0.1:${await closedPort()}/api/v2`, ...base },
  ];
});
afterAll(() => upstream.close());
beforeEach(() => {
  upstream.seen.length = 0;
});

const open = () =>
  supertest(createHttpApp(testDeps(noAuth), [localRoutes], { remoteNodes: nodes }));

describe('remoteNode forwarding', () => {
  it('forwards method, path and query without remoteNode, with the node basic credentials', async () => {
    const res = await open()
      .get('/api/v2/dags/etl?remoteNode=basic&tag=a%20b&perPage=5')
      .set('Authorization', 'Bearer callers-own-token');
    expect(res.status).toBe(200);
    expect(upstream.seen).toEqual([
      {
        method: 'GET',
        url: '/api/v2/dags/etl?tag=a+b&perPage=5',
        authorization: `Basic ${Buffer.from('remote-user:remote-pw').toString('base64')}`,
        contentType: undefined,
        body: '',
      },
    ]);
    expect((res.body as { echo: Seen }).echo.url).toBe('/api/v2/dags/etl?tag=a+b&perPage=5');
  });

  it('sends the node token, or no Authorization at all for a node without credentials', async () => {
    await open()
      .get('/api/v2/dags/etl?remoteNode=token')
      .set('Authorization', 'Basic Y2FsbGVyOnB3');
    await open()
      .get('/api/v2/dags/etl?remoteNode=plain')
      .set('Authorization', 'Basic Y2FsbGVyOnB3');
    expect(upstream.seen.map((s) => s.authorization)).toEqual(['Bearer remote-token', undefined]);
  });

  it('re-encodes the JSON body and passes a 2xx answer through', async () => {
    const res = await open()
      .post('/api/v2/dags/x/start?remoteNode=token')
      .send({ params: 'A=1', singleton: true });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ dagRunId: 'remote-run-1' });
    expect(upstream.seen[0]).toMatchObject({
      method: 'POST',
      contentType: 'application/json',
      body: '{"params":"A=1","singleton":true}',
    });
  });

  it('forwards paths no local route serves, and passes text answers through', async () => {
    const res = await open().get('/api/v2/metrics?remoteNode=plain');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toBe('svc_dags_total 3\n');
  });

  it('decompresses a gzip answer', async () => {
    const res = await open().get('/api/v2/gzipped?remoteNode=plain');
    expect(res.body).toEqual({ zipped: true });
  });

  it('answers a remote 4xx with the same status, code bad_gateway and the remote message', async () => {
    const res = await open().get('/api/v2/dags/missing?remoteNode=basic');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      code: 'bad_gateway',
      message: 'remote node "basic" answered 404 not_found: dag not found: missing',
      details: { remoteNode: 'basic', status: 404, remoteCode: 'not_found' },
    });
  });

  it('answers a remote 5xx text answer with its status and text', async () => {
    const res = await open().get('/api/v2/broken?remoteNode=plain');
    expect(res.status).toBe(500);
    expect(res.body).toMatchObject({
      code: 'bad_gateway',
      message: 'remote node "plain" answered 500: boom',
    });
  });

  it('answers 502 remote_node_error naming the node and the cause when it is unreachable', async () => {
    const res = await open().get('/api/v2/dags/etl?remoteNode=down');
    expect(res.status).toBe(502);
    expect(errorOf(res).code).toBe('remote_node_error');
    expect(errorOf(res).message).toMatch(
      /^remote node "down" \(http:\/\/127\.0\.0\.1:\d+\/api\/v2\) could not be reached: .*ECONNREFUSED/,
    );
    expect(errorOf(res).details).toEqual({ remoteNode: 'down', cause: 'ECONNREFUSED' });
  });

  it('answers 502 remote_node_error when the node does not answer within timeoutSec', async () => {
    const res = await open().get('/api/v2/slow?remoteNode=slow');
    expect(res.status).toBe(502);
    expect(res.body).toMatchObject({
      code: 'remote_node_error',
      message: `remote node "slow" (${upstream.url}) did not answer within 0.2 s (timeoutSec)`,
    });
  });

  it('refuses a path that would leave /api/v2 on the node', async () => {
    const node = nodes[2]!;
    await expect(
      sendToRemoteNode(node, { method: 'GET', path: '/../admin', query: '' }),
    ).rejects.toMatchObject({
      code: 'bad_request',
    });
    await expect(
      sendToRemoteNode(node, { method: 'GET', path: '/%2e%2e/admin', query: '' }),
    ).rejects.toMatchObject({
      code: 'bad_request',
    });
    expect(upstream.seen).toEqual([]);
  });
});

describe('remoteNode forwarding with local authentication', () => {
  const roles = (['operator', 'viewer'] as const).map((role) => ({
    name: role,
    password: `${role}-pw`,
    role,
  }));
  const auth = createAuthenticator(ConfigSchema.parse({ home: '/h', auth: { users: roles } }).auth);
  const app = () => supertest(createHttpApp(testDeps(auth), [localRoutes], { remoteNodes: nodes }));
  const as = (role: string) => `Basic ${Buffer.from(`${role}:${role}-pw`).toString('base64')}`;

  it('answers 401 before forwarding a request without local credentials', async () => {
    const res = await app().get('/api/v2/dags/etl?remoteNode=basic');
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Basic realm="trellis"');
    expect(upstream.seen).toEqual([]);
  });

  it('forwards a read for a viewer, with the node credentials instead of the caller', async () => {
    const res = await app()
      .get('/api/v2/dags/etl?remoteNode=token')
      .set('Authorization', as('viewer'));
    expect(res.status).toBe(200);
    expect(upstream.seen[0]?.authorization).toBe('Bearer remote-token');
  });

  it("holds the caller to the local route's permission: a viewer may not start on a node", async () => {
    const res = await app()
      .post('/api/v2/dags/x/start?remoteNode=token')
      .set('Authorization', as('viewer'))
      .send({});
    expect(res.status).toBe(403);
    expect(errorOf(res).message).toContain('running DAGs');
    expect(upstream.seen).toEqual([]);
    const ok = await app()
      .post('/api/v2/dags/x/start?remoteNode=token')
      .set('Authorization', as('operator'))
      .send({});
    expect(ok.status).toBe(200);
  });

  it('asks every write permission for a non-GET path no local route serves', async () => {
    const res = await app()
      .post('/api/v2/unknown/thing?remoteNode=token')
      .set('Authorization', as('operator'))
      .send({});
    expect(res.status).toBe(403);
    expect(errorOf(res).details).toEqual({ permission: 'dags:write' });
    expect(upstream.seen).toEqual([]);
  });
});
