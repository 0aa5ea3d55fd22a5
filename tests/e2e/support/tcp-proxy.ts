import { once } from 'node:events';
import { createConnection, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/** A TCP proxy a test can cut like a network partition: bytes stop, no connection is closed. */
export interface TcpProxy {
  /** The loopback port it listens on. */
  readonly port: number;
  /** From now on nothing goes through, either way, on old or new connections (a black hole). */
  cut(): void;
  /** Bytes flow again (what was held back is delivered). */
  heal(): void;
  close(): Promise<void>;
}

/** Forwards 127.0.0.1:<free port> to 127.0.0.1:`targetPort`. */
export const startTcpProxy = async (targetPort: number): Promise<TcpProxy> => {
  const sockets = new Set<Socket>();
  let cut = false;
  const pair = (client: Socket): void => {
    const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined); // the other side's close ends both
      if (cut) s.pause();
    }
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  };
  const server = createServer(pair);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    cut: () => {
      cut = true;
      for (const s of sockets) s.pause(); // unread bytes wait in the kernel: nothing answers
    },
    heal: () => {
      cut = false;
      for (const s of sockets) s.resume();
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
};
