import { once } from 'node:events';
import { get, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { SseConnection } from './sse.js';

/** What the socket had corked after each step the route took. */
type Seen = Record<string, number>;

const servers: { close: () => void }[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

/** Serves one SSE route running `body` and returns what it saw once the client read `until`. */
const serve = async (
  body: (conn: SseConnection, corked: () => number) => Promise<Seen>,
  until: string,
): Promise<{ seen: Seen; text: string }> => {
  let seen: Promise<Seen> | undefined;
  const app = express();
  app.get('/events', (req, res) => {
    const conn = new SseConnection(req, res, { heartbeatMs: 60_000 });
    seen = body(conn, () => res.socket?.writableCorked ?? -1);
  });
  const server = app.listen(0, '127.0.0.1');
  servers.push(server);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const res = await new Promise<IncomingMessage>((resolve) =>
    get(`http://127.0.0.1:${port}/events`, resolve),
  );
  let text = '';
  res.setEncoding('utf8');
  for await (const chunk of res) {
    text += chunk as string;
    if (text.includes(until)) break;
  }
  res.destroy();
  return { seen: await seen!, text };
};

describe('SseConnection', () => {
  it('puts an event sent inside a promise chain on the wire at once, not on the next tick', async () => {
    const { seen, text } = await serve(async (conn, corked) => {
      await Promise.resolve(); // a store save publishes from a promise chain
      conn.send('run:finished', { dagRunId: 'r1' }, 7);
      return { afterSend: corked() };
    }, 'r1');
    // Node corks a response's socket at each write until the next tick; the event must not wait
    expect(seen.afterSend).toBe(0);
    expect(text).toContain('id: 7\nevent: run:finished\ndata: {"dagRunId":"r1"}\n\n');
  });

  it('writes a batch (a replay) at its end, in order', async () => {
    const { seen, text } = await serve(async (conn, corked) => {
      await Promise.resolve();
      const inside: number[] = [];
      conn.batch(() => {
        conn.send('a', { n: 1 }, 1);
        conn.send('b', { n: 2 }, 2);
        inside.push(corked());
      });
      return { inside: inside[0]!, after: corked() };
    }, '"n":2');
    expect(seen.inside).toBeGreaterThan(0);
    expect(seen.after).toBe(0);
    expect(text.indexOf('event: a')).toBeLessThan(text.indexOf('event: b'));
  });
});
