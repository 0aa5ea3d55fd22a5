import { createServer, request, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { serveGate } from './serve-gate.js';

/*
 * The listener `trellis server` / `start-all` listen with before the app is loaded
 * (serve-gate.ts): a real server on loopback, real requests.
 */

const HEALTH = '/base/api/v2/health';
let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  server = undefined;
});

const listenWith = async (listener: RequestListener): Promise<number> => {
  server = createServer(listener);
  await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
};

/** A GET's status and body; `error` when the connection closed without an answer. */
const get = (port: number, path: string): Promise<{ status: number; body: string } | 'error'> =>
  new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', () => resolve('error'));
    req.end();
  });

/** Resolves once `n` requests reached the gate (it holds them, so nothing else says so). */
const arrivals = () => {
  let seen = 0;
  const waiters: [number, () => void][] = [];
  return {
    wrap:
      (l: RequestListener): RequestListener =>
      (req, res) => {
        seen += 1;
        for (const [n, w] of waiters) if (seen >= n) w();
        l(req, res);
      },
    reached: (n: number) => new Promise<void>((r) => (seen >= n ? r() : waiters.push([n, r]))),
  };
};

const app: RequestListener = (req, res) => res.end(`app ${req.url ?? ''}`);

describe('serveGate', () => {
  it('answers GET /health before the app is ready and holds every other request until it is', async () => {
    const gate = serveGate({
      healthPath: HEALTH,
      earlyHealth: () =>
        Promise.resolve({
          status: 200,
          body: { status: 'healthy', version: 'v', uptime: 0, timestamp: 't' },
        }),
    });
    const seen = arrivals();
    const port = await listenWith(seen.wrap(gate.listener));
    const dags = get(port, '/base/api/v2/dags');
    const runs = get(port, '/base/api/v2/dag-runs');
    await seen.reached(2);
    const health = await get(port, HEALTH);
    expect(health).toEqual({
      status: 200,
      body: JSON.stringify({ status: 'healthy', version: 'v', uptime: 0, timestamp: 't' }),
    });
    gate.open(app);
    expect(await dags).toEqual({ status: 200, body: 'app /base/api/v2/dags' });
    expect(await runs).toEqual({ status: 200, body: 'app /base/api/v2/dag-runs' });
    // once open, /health is the app's too
    expect(await get(port, HEALTH)).toEqual({ status: 200, body: `app ${HEALTH}` });
  });

  it('answers an unhealthy early probe with 503 and its error', async () => {
    const body = {
      status: 'unhealthy' as const,
      version: 'v',
      uptime: 0,
      timestamp: 't',
      error: 'disk',
    };
    const gate = serveGate({
      healthPath: HEALTH,
      earlyHealth: () => Promise.resolve({ status: 503 as const, body }),
    });
    const port = await listenWith(gate.listener);
    expect(await get(port, HEALTH)).toEqual({ status: 503, body: JSON.stringify(body) });
  });

  it('holds /health too without an early probe, and a health path with a query', async () => {
    const gate = serveGate({ healthPath: HEALTH });
    const seen = arrivals();
    const port = await listenWith(seen.wrap(gate.listener));
    const health = get(port, HEALTH);
    const remote = get(port, `${HEALTH}?remoteNode=other`);
    await seen.reached(2);
    gate.open(app);
    expect(await health).toEqual({ status: 200, body: `app ${HEALTH}` });
    expect(await remote).toEqual({ status: 200, body: `app ${HEALTH}?remoteNode=other` });
  });

  it('closes the held requests and refuses new ones when the start-up fails', async () => {
    const gate = serveGate({ healthPath: HEALTH });
    const seen = arrivals();
    const port = await listenWith(seen.wrap(gate.listener));
    const held = get(port, '/base/api/v2/dags');
    await seen.reached(1);
    gate.fail();
    expect(await held).toBe('error');
    expect(await get(port, '/base/api/v2/dags')).toBe('error');
  });
});
