import * as grpc from '@grpc/grpc-js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '@trellis/core';
import { MemoryCoordinatorStore } from '../../test/support/memory-coordinator-store.js';
import { CoordinatorClient, type CoordinatorClientOptions } from '../client/coordinator-client.js';
import { Coordinator } from '../server/coordinator.js';
import type { CoordinatorDeps } from '../server/coordinator-deps.js';
import type { TlsFiles } from '../server/credentials.js';
import { makeCa, makeLeaf, type CertPair } from './certs.js';

/** Real gRPC coordinators on free ports and real clients: tokens, protocol versions, mutual TLS. */
let dir: string;
const open: { stop(): Promise<void> }[] = [];
const clients: CoordinatorClient[] = [];

const start = async (
  extra: Partial<CoordinatorDeps>,
): Promise<{ coordinator: Coordinator; warnings: string[] }> => {
  const warnings: string[] = [];
  const coordinator = new Coordinator({
    store: new MemoryCoordinatorStore(),
    clock: systemClock,
    logDir: join(dir, 'logs'),
    port: 0,
    warn: (m) => warnings.push(m),
    ...extra,
  });
  await coordinator.start();
  open.push(coordinator);
  return { coordinator, warnings };
};

const client = (
  c: Coordinator,
  opts: Partial<CoordinatorClientOptions> = {},
): CoordinatorClient => {
  const cl = new CoordinatorClient({
    address: `localhost:${c.port}`,
    clock: systemClock,
    callTimeoutMs: 3_000,
    workerId: 'w1',
    ...opts,
  });
  clients.push(cl);
  return cl;
};

const beat = (cl: CoordinatorClient) =>
  cl.heartbeat({
    workerId: 'w1',
    labels: {},
    capacity: 1,
    runningTasks: [],
    incarnation: 'i1',
    accepting: true,
  });

/** The gRPC status code and message a heartbeat fails with. */
const refusal = async (cl: CoordinatorClient): Promise<{ code: number; details: string }> => {
  const e = (await beat(cl).then(
    () => {
      throw new Error('the heartbeat was accepted');
    },
    (err: unknown) => err,
  )) as grpc.ServiceError;
  return { code: e.code, details: e.details };
};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-auth-'));
});

afterAll(async () => {
  for (const cl of clients) cl.close();
  for (const c of open) await c.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('worker tokens', () => {
  it('accepts the right token, refuses a wrong or missing one with UNAUTHENTICATED, logged once', async () => {
    const { coordinator, warnings } = await start({ tokens: ['s3cret'] });
    await expect(beat(client(coordinator, { token: 's3cret' }))).resolves.toHaveProperty('queues');
    expect(coordinator.workers().map((w) => w.id)).toEqual(['w1']);

    const wrong = client(coordinator, { token: 'guess', workerId: 'intruder' });
    const r1 = await refusal(wrong);
    expect(r1.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(r1.details).toContain('SVC_WORKER_TOKEN');
    await refusal(wrong); // a second try: not logged again

    const none = client(coordinator, { workerId: 'anonymous' });
    const r2 = await refusal(none);
    expect(r2.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(r2.details).toContain('none was sent');
    // claims and streams are refused too, not only heartbeats
    await expect(
      none.claim({
        workerId: 'anonymous',
        run: null,
        root: null,
        host: '',
        pid: 1,
        processStart: '',
      }),
    ).rejects.toMatchObject({ code: grpc.status.UNAUTHENTICATED });

    expect(warnings.filter((w) => w.includes('"intruder"'))).toHaveLength(1);
    expect(warnings.filter((w) => w.includes('"anonymous"'))).toHaveLength(1);
    expect(coordinator.workers().map((w) => w.id)).toEqual(['w1']);
  });

  it('accepts the old and the new token while a rotation is under way', async () => {
    const { coordinator } = await start({ tokens: ['old-token', 'new-token'] });
    await expect(beat(client(coordinator, { token: 'old-token' }))).resolves.toBeDefined();
    await expect(beat(client(coordinator, { token: 'new-token' }))).resolves.toBeDefined();
    expect((await refusal(client(coordinator, { token: 'older-token' }))).code).toBe(
      grpc.status.UNAUTHENTICATED,
    );
  });
});

describe('protocol version', () => {
  it('refuses a worker of an unsupported protocol version, naming both versions', async () => {
    const { coordinator } = await start({});
    const r = await refusal(client(coordinator, { protocolVersion: 99 }));
    expect(r.code).toBe(grpc.status.FAILED_PRECONDITION);
    expect(r.details).toMatch(/protocol version 99, this coordinator supports version 1/);
  });
});

describe('binding', () => {
  it('refuses a non-loopback address without TLS or tokens, unless insecure', async () => {
    const c = new Coordinator({
      store: new MemoryCoordinatorStore(),
      clock: systemClock,
      logDir: join(dir, 'logs'),
      host: '0.0.0.0',
      port: 0,
    });
    await expect(c.start()).rejects.toThrow(
      /refusing to listen on 0\.0\.0\.0:0 without TLS or worker tokens.*--insecure/,
    );
    const { coordinator } = await start({ host: '0.0.0.0', insecure: true });
    expect(coordinator.port).toBeGreaterThan(0);
    const { coordinator: withToken } = await start({ host: '0.0.0.0', tokens: ['t'] });
    expect(withToken.port).toBeGreaterThan(0);
  });
});

describe('mutual TLS', () => {
  const files = (name: string, p: CertPair): TlsFiles => {
    const certFile = join(dir, `${name}.pem`);
    const keyFile = join(dir, `${name}-key.pem`);
    writeFileSync(certFile, p.cert);
    writeFileSync(keyFile, p.key, { mode: 0o600 });
    return { certFile, keyFile, caFile: '' };
  };

  it('admits a worker with a client certificate of the CA; refuses none, or one of another CA', async () => {
    const ca = await makeCa('trellis test CA', 1, new Date());
    const other = await makeCa('another CA', 1, new Date());
    const caFile = files('ca', ca).certFile;
    const server = files(
      'coordinator',
      await makeLeaf(
        ca,
        {
          commonName: 'localhost',
          use: 'server',
          hosts: ['localhost', '127.0.0.1'],
          days: 1,
        },
        new Date(),
      ),
    );
    const worker = files(
      'worker',
      await makeLeaf(ca, { commonName: 'w1', use: 'client', hosts: [], days: 1 }, new Date()),
    );
    const stranger = files(
      'stranger',
      await makeLeaf(other, { commonName: 'w1', use: 'client', hosts: [], days: 1 }, new Date()),
    );
    const { coordinator } = await start({ host: '0.0.0.0', tls: { ...server, caFile } });

    await expect(beat(client(coordinator, { tls: { ...worker, caFile } }))).resolves.toBeDefined();
    const noCert = await refusal(
      client(coordinator, { tls: { certFile: '', keyFile: '', caFile } }),
    );
    expect(noCert.code).toBe(grpc.status.UNAVAILABLE);
    const foreign = await refusal(client(coordinator, { tls: { ...stranger, caFile } }));
    expect(foreign.code).toBe(grpc.status.UNAVAILABLE);
    // plain gRPC to a TLS port gets nowhere either
    expect((await refusal(client(coordinator))).code).toBe(grpc.status.UNAVAILABLE);
    expect(coordinator.workers()).toHaveLength(1);
  });
});
