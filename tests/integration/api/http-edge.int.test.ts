import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerClientErrors, dagRoutes } from '@trellis/api';
import { ErrorBody } from '@trellis/contract';
import { systemClock } from '@trellis/core';
import { FsDagStore } from '@trellis/store';
import { apiHarness, type ApiHarness } from '../support/api-harness.js';

/**
 * Requests that fail before a route runs, on a real server as `trellis server` sets it up: the
 * HTTP parser's refusals and unreadable bodies answer 400 with the spec's error body, never 5xx
 * or a bare status (issue #15; found by tests/integration/api/api-fuzz.int.test.ts).
 */
let h: ApiHarness;
let server: Server;
let port = 0;

beforeAll(async () => {
  h = apiHarness([dagRoutes], {
    dags: (dagsDir) =>
      new FsDagStore({
        dagsDir,
        suspendDir: join(dagsDir, '..', 'suspend'),
        clock: systemClock,
        latestRun: () => Promise.resolve(undefined),
      }),
  });
  server = createServer(h.app);
  answerClientErrors(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  h.cleanup();
});

/** Sends `raw` bytes as a whole request and resolves with the status and the parsed error body. */
const rawRequest = async (raw: Buffer | string) => {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.write(raw); // not end(): a half-closed socket may lose its answer; the server closes it
  const chunks: Buffer[] = [];
  for await (const c of socket) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  const [head = '', body = ''] = text.split('\r\n\r\n');
  const status = Number(head.split(' ')[1]);
  return { status, head, body: status >= 400 ? ErrorBody.parse(JSON.parse(body)) : undefined };
};

const post = (path: string, headers: Record<string, string>, body: Buffer) =>
  rawRequest(
    Buffer.concat([
      Buffer.from(
        `POST ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: ${body.length}\r\n${Object.entries(
          headers,
        )
          .map(([k, v]) => `${k}: ${v}\r\n`)
          .join('')}\r\n`,
      ),
      body,
    ]),
  );

describe('requests refused before any route', () => {
  it('answers 400 JSON naming the limit for a URL over the header size limit', async () => {
    const a = await rawRequest(
      `GET /api/v2/dags?name=${'x'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
    );
    expect(a.status).toBe(400);
    expect(a.head).toMatch(/content-type: application\/json/i);
    expect(a.body).toMatchObject({
      code: 'bad_request',
      message: expect.stringMatching(/over \d+ bytes/),
    });
  });

  it('answers 400 JSON for raw bytes outside ASCII in the request line', async () => {
    const a = await rawRequest(
      Buffer.concat([
        Buffer.from('GET /api/v2/dags/'),
        Buffer.from([0xe9]),
        Buffer.from(' HTTP/1.1\r\nHost: x\r\n\r\n'),
      ]),
    );
    expect(a.status).toBe(400);
    expect(a.body?.message).toMatch(/percent-encode/);
  });

  it('answers 400 for a body whose Content-Encoding does not match it, or an unknown charset', async () => {
    const json = Buffer.from('{"spec":"steps: [echo]"}');
    for (const [headers, body, message] of [
      [{ 'Content-Encoding': 'gzip' }, json, /could not be read/],
      [{ 'Content-Encoding': 'br' }, json, /could not be read/],
      [{ 'Content-Encoding': 'x-nope' }, json, /encoding/],
      [{ 'Content-Type': 'application/json; charset=latin1' }, json, /charset/],
      [{ 'Content-Type': ';;;' }, Buffer.from('{'), /malformed JSON body/],
    ] as const) {
      const a = await post('/api/v2/dags/validate', headers, body);
      expect(a.status, JSON.stringify(headers)).toBe(400);
      expect(a.body?.code).toBe('bad_request');
      expect(a.body?.message).toMatch(message);
    }
    // a body that is what its Content-Encoding says is read
    const ok = await post('/api/v2/dags/validate', { 'Content-Encoding': 'gzip' }, gzipSync(json));
    expect(ok.status).toBe(200);
  });
});
