import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the receiver got. */
export interface ReceivedHook {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** When it arrived (performance.now(), ms). */
  readonly atMs: number;
}

/** How the receiver answers request `n` (0-based): a status, or `'hang'` (never answers). */
export type Answer = (n: number) => number | 'hang';

/** A real local HTTP server that records webhook deliveries and answers by script. */
export interface WebhookReceiver {
  readonly url: string;
  readonly received: readonly ReceivedHook[];
  answer: Answer;
  /** Resolves once `count` requests have arrived. */
  untilReceived(count: number): Promise<readonly ReceivedHook[]>;
  close(): Promise<void>;
}

export const startWebhookReceiver = async (answer: Answer): Promise<WebhookReceiver> => {
  const received: ReceivedHook[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const hanging: ServerResponse[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const n = received.length;
      received.push({ headers: req.headers, body, atMs: performance.now() });
      const a = receiver.answer(n);
      if (a === 'hang') hanging.push(res);
      else res.writeHead(a, { 'content-type': 'text/plain' }).end(a >= 300 ? 'not now' : 'ok');
      for (const w of [...waiters]) if (received.length >= w.count) w.resolve();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const receiver: WebhookReceiver = {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    answer,
    untilReceived: (count) =>
      new Promise((resolve) => {
        if (received.length >= count) return resolve(received);
        waiters.push({ count, resolve: () => resolve(received) });
      }),
    close: async () => {
      for (const r of hanging) r.destroy();
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
  return receiver;
};
