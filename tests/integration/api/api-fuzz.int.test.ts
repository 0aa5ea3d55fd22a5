import { once } from 'node:events';
import { Agent, createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_ROUTE_TABLES, answerClientErrors } from '@trellis/api';
import { systemClock } from '@trellis/core';
import { ErrorBody } from '@trellis/contract';
import { FsDagStore } from '@trellis/store';
import { apiHarness, unsubscribedWebhooks, type ApiHarness } from '../support/api-harness.js';
import { fuzzRequests, type FuzzRequest, type FuzzRoute } from '../support/fuzz-requests.js';

/**
 * Sends 1,200 malformed requests, made by a seeded generator, across every endpoint of the API on
 * a real HTTP server over the real store and engine: none may answer 5xx, and every 4xx must carry
 * the spec's error body with the code that goes with its status (spec: Errors). To explore other
 * requests change SEED; a failure prints the seed and the requests that failed.
 */
const SEED = 0x15_2026;
const COUNT = 1_200;

/** Spec: Errors: the statuses each code is answered with. */
const STATUSES_OF_CODE: Readonly<Record<string, readonly number[]>> = {
  bad_request: [400],
  not_running: [400],
  already_running: [400, 409],
  unauthorized: [401],
  forbidden: [403],
  not_found: [404],
  already_exists: [409],
};

/** Every route of the spec's endpoint families, plus the system ones createHttpApp adds. */
const ROUTES: readonly FuzzRoute[] = [
  ...API_ROUTE_TABLES.flat().map((r) => ({ method: r.method, path: r.path })),
  { method: 'get', path: '/health' },
  { method: 'get', path: '/metrics' },
  { method: 'get', path: '/openapi.json' },
  { method: 'get', path: '/no/such/endpoint/:x' },
];

interface Answer {
  readonly status: number;
  readonly contentType: string;
  readonly text: string;
}

const send = (base: URL, agent: Agent, req: FuzzRequest): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const r = request(
      {
        host: base.hostname,
        port: base.port,
        method: req.method,
        path: req.path,
        headers: {
          ...req.headers,
          ...(req.body ? { 'content-length': String(req.body.length) } : {}),
        },
        agent,
      },
      (res) => {
        const contentType = res.headers['content-type'] ?? '';
        // A well-formed request to a stream (events, a log followed live) is answered with 200
        // and a body that never ends: its status and type are the answer.
        if (res.statusCode === 200 && contentType.startsWith('text/event-stream')) {
          res.destroy();
          resolve({ status: 200, contentType, text: '' });
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    // A server that answers before reading a whole (oversized) body may close the connection.
    r.on('error', (e: NodeJS.ErrnoException) =>
      e.code === 'EPIPE' || e.code === 'ECONNRESET' ? undefined : reject(e),
    );
    r.end(req.body);
  });

/** What is wrong with an answer, or undefined when it is fine. */
const problemOf = (a: Answer): string | undefined => {
  if (a.status >= 500) return `answered ${a.status}`;
  if (a.status < 400) return undefined;
  if (!a.contentType.startsWith('application/json')) return `${a.status} is not JSON`;
  let json: unknown;
  try {
    json = JSON.parse(a.text);
  } catch {
    return `${a.status} body does not parse as JSON`;
  }
  const parsed = ErrorBody.safeParse(json);
  if (!parsed.success) return `${a.status} body is not {code, message, details?}`;
  const allowed = STATUSES_OF_CODE[parsed.data.code];
  if (!allowed) return `${a.status} has code "${parsed.data.code}", not a spec code`;
  if (!allowed.includes(a.status)) return `${a.status} does not go with "${parsed.data.code}"`;
  return parsed.data.message.trim() === '' ? `${a.status} has an empty message` : undefined;
};

describe(`API fuzz: ${COUNT} malformed requests (seed ${SEED})`, () => {
  let h: ApiHarness;
  let server: Server;
  let base: URL;
  // A connection per request: a kept-alive socket the server closes after its idle timeout (5 s,
  // easily reached while a loaded machine finishes the setup run) may be reused at that very
  // moment, and its ECONNRESET is ignored below (it is how an oversized body ends), which would
  // leave the request unanswered.
  const agent = new Agent({ keepAlive: false, maxSockets: 4 });

  beforeAll(async () => {
    h = apiHarness([...API_ROUTE_TABLES], {
      dags: (dagsDir) =>
        new FsDagStore({
          dagsDir,
          suspendDir: join(dagsDir, '..', 'suspend'),
          clock: systemClock,
          latestRun: async (name) => (await h.store.listRuns({ name, limit: 1 }))[0],
        }),
      workers: () => [],
      webhooks: unsubscribedWebhooks,
    });
    h.dag('fuzz-a', 'steps:\n  - name: s1\n    command: "true"\n');
    h.dag('fuzz-b', 'params: X=1\nsteps:\n  - name: s1\n    command: "true"\n  - "true"\n');
    h.dag('broken', 'steps: [\n');
    server = createServer(h.app);
    answerClientErrors(server); // as `trellis server` does
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    const started = await send(base, agent, {
      method: 'POST',
      path: '/api/v2/dags/fuzz-a/start',
      headers: { 'content-type': 'application/json' },
      body: Buffer.from('{"dagRunId":"run-1"}'),
      route: 'setup',
    });
    expect(started.status).toBe(200);
    await h.finished('fuzz-a', 'run-1');
  });

  afterAll(async () => {
    agent.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await h.runs.drain(10_000); // runs a lucky request started
    h.cleanup();
  });

  it('answers no 5xx, and the spec error body with a matching status on every 4xx', async () => {
    console.log(`API fuzz seed: ${SEED} (${COUNT} requests)`);
    const requests = fuzzRequests(SEED, COUNT, ROUTES, {
      params: {
        fileName: ['fuzz-a', 'fuzz-b', 'broken'],
        name: ['fuzz-a', 'fuzz-b'],
        dagRunId: ['run-1', 'latest'],
        childDAGRunId: ['run-1'],
        stepName: ['s1', 'step 2'],
      },
    });
    const problems: string[] = [];
    const perRoute = new Map<string, number>();
    const statuses = new Map<number, number>();
    for (const req of requests) {
      const a = await send(base, agent, req);
      perRoute.set(req.route, (perRoute.get(req.route) ?? 0) + 1);
      statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
      const problem = problemOf(a);
      if (problem)
        problems.push(
          `${problem}: ${req.method} ${req.path.slice(0, 200)} [${req.headers['content-type'] ?? ''}] ${req.body?.subarray(0, 120).toString() ?? ''} -> ${a.text.slice(0, 300)}`,
        );
    }
    console.log(`API fuzz statuses: ${JSON.stringify(Object.fromEntries(statuses))}`);
    expect(problems.slice(0, 25), `seed ${SEED}: ${problems.length} bad answers`).toEqual([]);
    // every route was exercised, and the server kept answering 4xx for most of it
    expect(requests.length).toBeGreaterThanOrEqual(1_000);
    for (const r of ROUTES)
      expect(perRoute.get(`${r.method.toUpperCase()} ${r.path}`), r.path).toBeGreaterThan(10);
    expect(statuses.get(400)).toBeGreaterThan(COUNT / 4);
  }, 300_000);
});
