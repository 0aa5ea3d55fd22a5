import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stepContext } from '../../test/support/exec-context.js';
import { HttpExecutor } from './http.executor.js';

const http = new HttpExecutor();
let dir: string;
let server: Server;
let tls: Server;
let base: string;
let tlsBase: string;
/** Requests to /slow wait here until the test ends them. */
const slow: ServerResponse[] = [];
let slowArrived: () => void = () => undefined;

const handler = (req: IncomingMessage, res: ServerResponse): void => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/slow') {
      slow.push(res);
      slowArrived();
      return;
    }
    const status = url.pathname === '/missing' ? 404 : url.pathname === '/boom' ? 500 : 200;
    res.writeHead(status, { 'content-type': 'application/json', 'x-trace': 'abc' });
    res.end(
      JSON.stringify({
        method: req.method,
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        auth: req.headers.authorization ?? '',
        body: Buffer.concat(chunks).toString(),
      }),
    );
  });
};

const listen = (s: Server): Promise<number> =>
  new Promise((resolve) =>
    s.listen(0, '127.0.0.1', () => resolve((s.address() as AddressInfo).port)),
  );

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'trellis-http-'));
  execFileSync(
    'openssl',
    [
      ...['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost'],
      ...['-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')],
    ],
    { stdio: 'ignore' },
  );
  server = createServer(handler);
  tls = createHttpsServer(
    { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) },
    handler,
  );
  base = `http://127.0.0.1:${await listen(server)}`;
  tlsBase = `https://127.0.0.1:${await listen(tls)}`;
}, 60_000);
afterAll(async () => {
  for (const res of slow) res.destroy();
  server.closeAllConnections();
  tls.closeAllConnections();
  await Promise.all([server, tls].map((s) => new Promise((r) => s.close(r))));
  await rm(dir, { recursive: true, force: true });
});

const step = (command: string, config: Record<string, unknown> = {}) =>
  stepContext({ executor: { type: 'http', config }, command }, dir, { captureLimit: 1 << 20 });

describe('http executor (real local HTTP and HTTPS servers)', { timeout: 30_000 }, () => {
  it('prints the status line, headers and body of a 2xx response', async () => {
    const t = step(`GET ${base}/ok`);
    const outcome = await http.run(t.ctx);
    expect(outcome.exitCode).toBe(0);
    expect(t.out.text).toMatch(/^HTTP\/1\.1 200 OK\n/);
    expect(t.out.text).toContain('x-trace: abc\n');
    expect(t.out.text).toContain('\n\n{"method":"GET"');
    expect(outcome.output).toBe(t.out.text);
  });

  it('sends headers, query and body; silent outputs the body only', async () => {
    const t = step(`POST ${base}/items?page=1`, {
      headers: { Authorization: 'Bearer t0k' },
      query: { size: '10' },
      body: '{"name":"x"}',
      silent: true,
    });
    const outcome = await http.run(t.ctx);
    expect(outcome.exitCode).toBe(0);
    expect(JSON.parse(t.out.text)).toEqual({
      method: 'POST',
      path: '/items',
      query: { page: '1', size: '10' },
      auth: 'Bearer t0k',
      body: '{"name":"x"}',
    });
  });

  it('outputs {status_code, headers, body} with json: true', async () => {
    const t = step(`DELETE ${base}/ok`, { json: true });
    await http.run(t.ctx);
    const j = JSON.parse(t.out.text) as { status_code: number; headers: Record<string, string> };
    expect(j.status_code).toBe(200);
    expect(j.headers['x-trace']).toBe('abc');
  });

  it('fails a 4xx or 5xx response and still writes it', async () => {
    for (const [path, code] of [
      ['missing', 404],
      ['boom', 500],
    ] as const) {
      const t = step(`GET ${base}/${path}`, { silent: true });
      const outcome = await http.run(t.ctx);
      expect(outcome.exitCode).toBe(1);
      expect(outcome.error).toBe(`http status code not 2xx: ${code}`);
      expect(t.out.text).toMatch(new RegExp(`^HTTP/1.1 ${code} `));
    }
  });

  it('fails after timeout seconds when the server does not answer', async () => {
    const arrived = new Promise<void>((r) => (slowArrived = r));
    const t = step(`GET ${base}/slow`, { timeout: 1 });
    const outcome = await http.run(t.ctx);
    await arrived;
    expect(outcome.exitCode).toBeNull();
    expect(outcome.error).toBe(`http request GET ${base}/slow timed out after 1s (timeout)`);
  });

  it('ends a waiting request when the step is stopped', async () => {
    const arrived = new Promise<void>((r) => (slowArrived = r));
    const t = step(`GET ${base}/slow`);
    const running = http.run(t.ctx);
    await arrived;
    t.stopper.abort();
    expect(await running).toEqual({ exitCode: null, signal: 'SIGTERM' });
  });

  it('refuses a self-signed certificate unless skipTLSVerify is set', async () => {
    const strict = await http.run(step(`GET ${tlsBase}/ok`).ctx);
    expect(strict.exitCode).toBeNull();
    expect(strict.error).toMatch(/failed: .*(self[- ]signed|certificate)/i);
    const t = step(`GET ${tlsBase}/ok`, { skipTLSVerify: true, silent: true });
    const outcome = await http.run(t.ctx);
    expect(outcome.exitCode).toBe(0);
    expect(JSON.parse(t.out.text)).toMatchObject({ method: 'GET', path: '/ok' });
  });

  it('reports a refused connection clearly', async () => {
    const probe = createServer();
    const port = await listen(probe);
    await new Promise((r) => probe.close(r));
    const outcome = await http.run(step(`GET http://127.0.0.1:${port}/`).ctx);
    expect(outcome.error).toContain('ECONNREFUSED');
  });
});
