import { EventEmitter, once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import {
  bytesOf,
  fixed64Of,
  readMessage,
  stringOf,
  varintOf,
  type WireMessage,
} from './protobuf-reader.js';

/** An attribute value as OTLP carries it. */
export type AttrValue = string | boolean | number;

/** One span as the receiver decoded it from an OTLP/HTTP protobuf request. */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** `''` for a root span. */
  readonly parentSpanId: string;
  readonly name: string;
  readonly startNs: bigint;
  readonly endNs: bigint;
  readonly attributes: Readonly<Record<string, AttrValue>>;
  /** 0 unset, 1 ok, 2 error. */
  readonly statusCode: number;
  readonly statusMessage: string;
  readonly resource: Readonly<Record<string, AttrValue>>;
}

// opentelemetry-proto field numbers (trace/v1, common/v1, resource/v1)
const anyValue = (m: WireMessage): AttrValue => {
  if (m.has(1)) return stringOf(m, 1);
  if (m.has(2)) return varintOf(m, 2) === 1n;
  if (m.has(3)) return Number(BigInt.asIntN(64, varintOf(m, 3) ?? 0n));
  const d = m.get(4)?.[0];
  if (d?.type === 'fixed64') return d.bytes.readDoubleLE(0);
  return '';
};

const attributes = (list: Buffer[]): Record<string, AttrValue> => {
  const out: Record<string, AttrValue> = {};
  for (const kv of list) {
    const m = readMessage(kv);
    const value = bytesOf(m, 2)[0];
    out[stringOf(m, 1)] = value ? anyValue(readMessage(value)) : '';
  }
  return out;
};

/** Decodes an ExportTraceServiceRequest into spans. */
export const decodeTraceRequest = (body: Buffer): ReceivedSpan[] => {
  const spans: ReceivedSpan[] = [];
  for (const rs of bytesOf(readMessage(body), 1)) {
    const resourceSpans = readMessage(rs);
    const res = bytesOf(resourceSpans, 1)[0];
    const resource = res ? attributes(bytesOf(readMessage(res), 1)) : {};
    for (const ss of bytesOf(resourceSpans, 2)) {
      for (const raw of bytesOf(readMessage(ss), 2)) {
        const s = readMessage(raw);
        const status = bytesOf(s, 15)[0];
        const st: WireMessage = status ? readMessage(status) : new Map<number, never[]>();
        spans.push({
          traceId: bytesOf(s, 1)[0]?.toString('hex') ?? '',
          spanId: bytesOf(s, 2)[0]?.toString('hex') ?? '',
          parentSpanId: bytesOf(s, 4)[0]?.toString('hex') ?? '',
          name: stringOf(s, 5),
          startNs: fixed64Of(s, 7) ?? 0n,
          endNs: fixed64Of(s, 8) ?? 0n,
          attributes: attributes(bytesOf(s, 9)),
          statusCode: Number(varintOf(st, 3) ?? 0n),
          statusMessage: stringOf(st, 2),
          resource,
        });
      }
    }
  }
  return spans;
};

/**
 * An in-process OTLP/HTTP collector on a free loopback port: it decodes what the exporter posts to
 * `/v1/traces` (protobuf, optionally gzip) and keeps the spans. Tests await `waitFor` instead of
 * sleeping.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** Request headers of every export, in order. */
  readonly requests: Record<string, string | string[] | undefined>[] = [];
  readonly #events = new EventEmitter();
  readonly #server: Server;

  readonly #secure: boolean;

  private constructor(server: Server, secure: boolean) {
    this.#server = server;
    this.#secure = secure;
  }

  /** Starts the receiver; with `tls` (PEM key and certificate) it serves https. */
  static async start(tls?: { key: string; cert: string }): Promise<OtlpReceiver> {
    const server: Server = tls ? createHttpsServer(tls) : createServer();
    const receiver = new OtlpReceiver(server, tls !== undefined);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.method !== 'POST' || req.url !== '/v1/traces') {
          res.writeHead(404).end();
          return;
        }
        let body = Buffer.concat(chunks);
        if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
        receiver.requests.push({ ...req.headers });
        try {
          receiver.spans.push(...decodeTraceRequest(body));
        } catch (e) {
          res.writeHead(400).end((e as Error).message);
          return;
        }
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
        receiver.#events.emit('spans');
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return receiver;
  }

  /** `http://127.0.0.1:<port>` (`https://` when started with TLS) */
  get endpoint(): string {
    const scheme = this.#secure ? 'https' : 'http';
    return `${scheme}://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  /** Resolves once the received spans satisfy `done` (checked after every export). */
  async waitFor(done: (spans: readonly ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]> {
    while (!done(this.spans)) await once(this.#events, 'spans');
    return [...this.spans];
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
