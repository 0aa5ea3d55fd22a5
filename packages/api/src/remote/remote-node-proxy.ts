import type { Request, RequestHandler, Response } from 'express';
import { AppError, ErrorCode, type RemoteNodeConfig } from '@trellis/core';
import { WAIT_TIMEOUT_DEFAULT_SECONDS, WAIT_TIMEOUT_MAX_SECONDS } from '@trellis/contract';
import { requirePermission } from '../auth/require-permission.js';
import { STATUS_OVERRIDES } from '../errors/error-middleware.js';
import type { StatusOverrides } from '../errors/status-for.js';
import type { Authenticator, Permission } from '../http/auth.js';
import { sendToRemoteNode, type RemoteRequest, type RemoteResponse } from './remote-transport.js';

/** What {@link createRemoteNodeProxy} needs. */
export interface RemoteNodeProxyOptions {
  /** The configured nodes (`config.remoteNodes`). */
  readonly nodes: readonly RemoteNodeConfig[];
  /** This server's authenticator: a forwarded request must pass it first. */
  readonly auth: Authenticator;
  /** Sends a request to a node. @default {@link sendToRemoteNode} */
  readonly send?: (node: RemoteNodeConfig, request: RemoteRequest) => Promise<RemoteResponse>;
}

/** The `remoteNode` forwarder (spec: Endpoints, `remoteNode`; docs/architecture.md, "House style"). */
export interface RemoteNodeProxy {
  /**
   * A middleware that forwards a request whose `remoteNode` names a configured node, and passes
   * every other request on (`remoteNode` absent, empty or `local`). `permission` is what the
   * local route needs: the caller must hold it (and `read`) here, because the node is called with
   * the node's own credentials. Without it (a path no local route serves), GET and HEAD need
   * `read` and other methods every write permission.
   */
  readonly middleware: (
    permission?: Permission | 'public',
    opts?: { readonly stream?: boolean },
  ) => RequestHandler;
}

const ALL_WRITES: readonly Permission[] = ['read', 'dags:write', 'runs:write'];

const neededFor = (req: Request, permission: Permission | 'public' | undefined): Permission[] => {
  if (permission === undefined) {
    return req.method === 'GET' || req.method === 'HEAD' ? ['read'] : [...ALL_WRITES];
  }
  return permission === 'public' || permission === 'read' ? ['read'] : ['read', permission];
};

/** The raw query string without `remoteNode`, keeping the caller's encoding of the rest. */
const queryWithoutRemoteNode = (req: Request): string => {
  const q = req.originalUrl.indexOf('?');
  if (q === -1) return '';
  const params = new URLSearchParams(req.originalUrl.slice(q + 1));
  params.delete('remoteNode');
  return params.toString();
};

/**
 * The seconds a forwarded long-poll may wait on the node (`waitFor` with `timeout`, or its
 * default); 0 for other requests. The node validates the values itself.
 */
const waitSecondsOf = (req: Request): number => {
  if (typeof req.query.waitFor !== 'string') return 0;
  const t = Number(req.query.timeout ?? WAIT_TIMEOUT_DEFAULT_SECONDS);
  return Number.isFinite(t) ? Math.min(Math.max(t, 0), WAIT_TIMEOUT_MAX_SECONDS) : 0;
};

/** `{code, message}` of an error answer, whatever the node sent. */
const remoteError = (r: RemoteResponse): { code?: string; message: string } => {
  const text = r.body.toString('utf8').trim();
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed === 'object' && parsed !== null) {
      const { code, message } = parsed as { code?: unknown; message?: unknown };
      if (typeof message === 'string' && message !== '') {
        return { message, ...(typeof code === 'string' ? { code } : {}) };
      }
    }
  } catch {
    // not JSON: the text itself, shortened, is the message
  }
  if (text === '') return { message: `HTTP ${r.status} without a body` };
  return { message: text.length > 300 ? `${text.slice(0, 297)}...` : text };
};

const passThrough = (res: Response, r: RemoteResponse): void => {
  res.status(r.status);
  if (r.contentType !== undefined) res.setHeader('Content-Type', r.contentType);
  if (r.body.length === 0) res.end();
  else res.send(r.body);
};

/**
 * Forwards requests to remote nodes: the path after `/api/v2`, the query without `remoteNode`,
 * the JSON body re-encoded, and the node's credentials in place of the caller's `Authorization`
 * header. A 2xx answer is passed through (status, content type, body); an error answer becomes
 * `bad_gateway` with the node's status and message; an unknown node is 400 `bad_request`;
 * connection failures and timeouts are 502 `remote_node_error`.
 */
export const createRemoteNodeProxy = (options: RemoteNodeProxyOptions): RemoteNodeProxy => {
  const nodes = new Map(options.nodes.map((n) => [n.name, n]));
  const send = options.send ?? sendToRemoteNode;

  const selectNode = (value: unknown): RemoteNodeConfig | undefined => {
    if (value === undefined || value === '' || value === 'local') return undefined;
    if (typeof value !== 'string') {
      throw new AppError(ErrorCode.BadRequest, 'invalid query: give remoteNode once', {
        remoteNode: value,
      });
    }
    const node = nodes.get(value);
    if (node) return node;
    const configured = [...nodes.keys()];
    throw new AppError(
      ErrorCode.BadRequest,
      `unknown remote node "${value}": ${
        configured.length === 0
          ? 'no remote nodes are configured'
          : `the configured ones are ${configured.map((n) => `"${n}"`).join(', ')}`
      } (remoteNode=local means this server)`,
      { remoteNode: value, configured },
    );
  };

  const forward = async (req: Request, res: Response, node: RemoteNodeConfig): Promise<void> => {
    const body: unknown = req.body;
    // a long-poll (waitFor) waits on the node: its answer may take the wait plus timeoutSec
    const gone = new AbortController();
    const onClose = (): void => gone.abort();
    res.on('close', onClose);
    const answer = await send(
      { ...node, timeoutSec: node.timeoutSec + waitSecondsOf(req) },
      {
        method: req.method,
        path: req.path,
        query: queryWithoutRemoteNode(req),
        ...(body === undefined ? {} : { body }),
        signal: gone.signal,
      },
    ).finally(() => res.off('close', onClose));
    if (answer.status >= 200 && answer.status < 300) {
      passThrough(res, answer);
      return;
    }
    const { code, message } = remoteError(answer);
    const status = answer.status >= 400 && answer.status <= 599 ? answer.status : 502;
    const overrides: StatusOverrides = { bad_gateway: status };
    (res.locals as Record<symbol, StatusOverrides>)[STATUS_OVERRIDES] = overrides;
    throw new AppError(
      ErrorCode.BadGateway,
      `remote node "${node.name}" answered ${answer.status}${code ? ` ${code}` : ''}: ${message}`,
      { remoteNode: node.name, status: answer.status, ...(code ? { remoteCode: code } : {}) },
    );
  };

  return {
    middleware: (permission, opts) => (req, res, next) => {
      let node: RemoteNodeConfig | undefined;
      try {
        node = selectNode(req.query.remoteNode);
        if (node === undefined) {
          next();
          return;
        }
        if (opts?.stream)
          throw new AppError(
            ErrorCode.BadRequest,
            `event streams are not forwarded to remote nodes: connect to "${node.name}" (${node.apiBaseURL}) directly`,
            { remoteNode: node.name },
          );
        requirePermission(options.auth, req, res, neededFor(req, permission));
      } catch (e) {
        next(e);
        return;
      }
      forward(req, res, node).catch(next);
    },
  };
};
