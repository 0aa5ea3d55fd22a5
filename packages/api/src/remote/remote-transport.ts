import http, { type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import https from 'node:https';
import { pipeline, type Readable } from 'node:stream';
import zlib from 'node:zlib';
import { AppError, ErrorCode, type RemoteNodeAuth, type RemoteNodeConfig } from '@trellis/core';

/** A request to forward: everything after the node's `apiBaseURL`. */
export interface RemoteRequest {
  readonly method: string;
  /** Path after `/api/v2`, starting with `/` (`/dags/x`), as the caller sent it (not decoded). */
  readonly path: string;
  /** Query string without `?`, already encoded; `''` for none. */
  readonly query: string;
  /** A JSON body to send, or `undefined` for none. */
  readonly body?: unknown;
  /** Aborts the request (the caller went away); the node's `timeoutSec` applies as well. */
  readonly signal?: AbortSignal;
}

/** What the node answered. */
export interface RemoteResponse {
  readonly status: number;
  readonly contentType: string | undefined;
  /** The body, decompressed. */
  readonly body: Buffer;
}

/** Answers larger than this are refused rather than buffered. */
export const MAX_REMOTE_RESPONSE_BYTES = 64 * 1024 * 1024;

/** The `Authorization` header for a node's credentials. */
export const authorizationFor = (auth: RemoteNodeAuth | undefined): string | undefined => {
  if (auth === undefined) return undefined;
  if ('token' in auth) return `Bearer ${auth.token}`;
  const pair = `${auth.basic.username}:${auth.basic.password}`;
  return `Basic ${Buffer.from(pair, 'utf8').toString('base64')}`;
};

/** The node's URL for `request`; refuses a path that would leave `apiBaseURL` (`/../`). */
const targetUrl = (node: RemoteNodeConfig, request: RemoteRequest): URL => {
  const base = new URL(node.apiBaseURL);
  const url = new URL(
    `${node.apiBaseURL}${request.path}${request.query ? `?${request.query}` : ''}`,
  );
  if (url.pathname !== `${base.pathname}${request.path}`) {
    throw new AppError(
      ErrorCode.BadRequest,
      `the path ${request.path} cannot be forwarded to remote node "${node.name}": ` +
        'remove "." and ".." segments',
      { remoteNode: node.name },
    );
  }
  return url;
};

const decoderFor = (
  encoding: string | undefined,
): zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | undefined => {
  switch (encoding?.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip();
    case 'deflate':
      return zlib.createInflate();
    case 'br':
      return zlib.createBrotliDecompress();
    default:
      return undefined;
  }
};

const readBody = async (res: IncomingMessage, node: RemoteNodeConfig): Promise<Buffer> => {
  const decoder = decoderFor(res.headers['content-encoding']);
  const stream: Readable = decoder ? pipeline(res, decoder, () => undefined) : res;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > MAX_REMOTE_RESPONSE_BYTES) {
      res.destroy();
      throw new AppError(
        ErrorCode.RemoteNodeError,
        `remote node "${node.name}" sent an answer larger than ${MAX_REMOTE_RESPONSE_BYTES} bytes; ` +
          'ask for less (page, perPage, limit)',
        { remoteNode: node.name },
      );
    }
    chunks.push(buf);
  }
  return Buffer.concat(chunks);
};

/** Why a request failed, in words, without anything the caller sent. */
const describeCause = (e: unknown): string => {
  const err = e as NodeJS.ErrnoException;
  const message = typeof err.message === 'string' && err.message !== '' ? err.message : String(e);
  const code = typeof err.code === 'string' ? err.code : undefined;
  const text = code !== undefined && !message.includes(code) ? `${message} (${code})` : message;
  const tls = code !== undefined && /CERT|SELF_SIGNED|TLS|SSL/.test(code);
  return tls ? `${text}; if the node's certificate is trusted, set skipTLSVerify: true` : text;
};

/**
 * Sends one request to a remote node with its credentials and its `timeoutSec`, over node:http
 * or node:https (`skipTLSVerify` turns certificate checks off), and reads the whole answer,
 * decompressing gzip, deflate and br. Any answer, error statuses included, resolves.
 * @throws AppError `remote_node_error` when the node cannot be reached, fails mid-answer, does
 * not answer in time or answers too much; `bad_request` for a path that would leave `/api/v2`.
 */
export const sendToRemoteNode = async (
  node: RemoteNodeConfig,
  request: RemoteRequest,
): Promise<RemoteResponse> => {
  const url = targetUrl(node, request);
  const body = request.body === undefined ? undefined : Buffer.from(JSON.stringify(request.body));
  const headers: OutgoingHttpHeaders = {
    accept: 'application/json',
    'accept-encoding': 'gzip, deflate, br',
    'user-agent': 'trellis-remote-node',
  };
  const authorization = authorizationFor(node.auth);
  if (authorization !== undefined) headers.authorization = authorization;
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = body.length;
  }
  const timeout = AbortSignal.timeout(node.timeoutSec * 1000);
  const signal = request.signal ? AbortSignal.any([timeout, request.signal]) : timeout;
  const where = `remote node "${node.name}" (${node.apiBaseURL})`;
  try {
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const options = { method: request.method, headers, signal };
      const req =
        url.protocol === 'https:'
          ? https.request(url, { ...options, rejectUnauthorized: !node.skipTLSVerify }, resolve)
          : http.request(url, options, resolve);
      req.on('error', reject);
      req.end(body);
    });
    return {
      status: res.statusCode ?? 502,
      contentType: res.headers['content-type'],
      body: await readBody(res, node),
    };
  } catch (e) {
    if (AppError.is(e)) throw e;
    if (timeout.aborted) {
      throw new AppError(
        ErrorCode.RemoteNodeError,
        `${where} did not answer within ${node.timeoutSec} s (timeoutSec)`,
        { remoteNode: node.name, cause: 'timeout' },
        { cause: e },
      );
    }
    throw new AppError(
      ErrorCode.RemoteNodeError,
      `${where} could not be reached: ${describeCause(e)}`,
      { remoteNode: node.name, cause: (e as NodeJS.ErrnoException).code ?? 'error' },
      { cause: e },
    );
  }
};
