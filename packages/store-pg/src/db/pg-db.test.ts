import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { PgDb } from './pg-db.js';
import type { StallSource } from './loop-stalls.js';

const TIMEOUT_MS = 100;

/** A TCP peer that accepts connections and never answers: every connect times out. */
const silentPeer = async (): Promise<{ server: Server; port: number; accepted: () => number }> => {
  const sockets: Socket[] = [];
  const server = createServer((s) => void sockets.push(s));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  server.on('close', () => sockets.forEach((s) => s.destroy()));
  const port = (server.address() as { port: number }).port;
  return { server, port, accepted: () => sockets.length };
};

let close: (() => void) | undefined;
afterEach(() => close?.());

/** Runs one query against a silent peer, the stall timer saying what `stalls` says. */
const queryWith = async (stalls: StallSource): Promise<{ error: unknown; connects: number }> => {
  const peer = await silentPeer();
  const db = new PgDb({
    url: `postgres://u:p@127.0.0.1:${peer.port}/d`,
    poolSize: 1,
    connectTimeoutMs: TIMEOUT_MS,
    stalls,
  });
  close = () => peer.server.close();
  const error = await db.query('SELECT 1').then(
    () => undefined,
    (e: unknown) => e,
  );
  await db.end().catch(() => undefined);
  return { error, connects: peer.accepted() };
};

describe('PgDb: a connect timeout', () => {
  it('is tried once more when a stall was noted within the wait', async () => {
    const { error, connects } = await queryWith({
      ranWithin: () => 0,
      stalledWithin: () => 2000,
    });
    expect(error).toMatchObject({ code: 'service_unavailable' });
    expect(connects).toBe(2);
  });

  it('is not tried again when no stall was noted, though the timer fired a little early', async () => {
    const { error, connects } = await queryWith({
      ranWithin: () => TIMEOUT_MS - 1,
      stalledWithin: () => 0,
    });
    expect(error).toMatchObject({ code: 'service_unavailable' });
    expect(connects).toBe(1);
  });
});
