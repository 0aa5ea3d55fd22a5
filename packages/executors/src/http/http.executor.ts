import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { ExecContext, ExecutionOutcome, Executor } from '@trellis/engine';
import { emitOutput, failed, writeText } from '../common/outcome.js';
import { parseHttpCommand } from './http-command.js';

/** The http executor's config as the spec package compiles it (spec: Executors). */
interface HttpConfig {
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly query?: Readonly<Record<string, string>>;
  /** Seconds for the whole exchange; 0 = no limit. @default 0 */
  readonly timeout?: number;
  /** Output only the body (of a 2xx response). @default false */
  readonly silent?: boolean;
  /** Accept any TLS certificate. @default false */
  readonly skipTLSVerify?: boolean;
  /** Output `{status_code, headers, body}` as JSON. @default false */
  readonly json?: boolean;
  /** The request line and headers on stderr. @default false */
  readonly debug?: boolean;
}

interface HttpResponse {
  readonly status: number;
  readonly statusText: string;
  readonly httpVersion: string;
  readonly headers: IncomingMessage['headers'];
  readonly rawHeaders: readonly string[];
  readonly body: string;
}

/**
 * `executor: http` (spec: Executors; as the peer does): `command` is `<METHOD> <URL>`; config
 * `headers`, `body`, `query`, `timeout` (s), `silent`, `skipTLSVerify`, plus the peer's `json` and
 * `debug`. The output is the status line, the headers and the body (only the body with `silent`),
 * captured like any step's stdout. A non-2xx response fails the step after its output is written.
 */
export class HttpExecutor implements Executor {
  async run(ctx: ExecContext): Promise<ExecutionOutcome> {
    const config = ctx.step.executor.config as HttpConfig;
    const parsed = parseHttpCommand(ctx.step.cmdWithArgs ?? '', config.query ?? {});
    if ('problem' in parsed) return failed(parsed.problem);
    if (ctx.stop.abort.aborted) return failed('the step was stopped before it started');
    const { method, url } = parsed;
    const headers = { ...config.headers };
    if (config.debug === true)
      await writeText(
        ctx.stderr,
        `${method} ${url.href}\n${Object.entries(headers)
          .map(([k, v]) => `${k}: ${v}\n`)
          .join('')}\n`,
      );

    const timeoutSec = config.timeout ?? 0;
    const result = await send(url, {
      method,
      headers,
      body: config.body,
      timeoutMs: timeoutSec * 1000,
      insecure: config.skipTLSVerify === true,
      abort: ctx.stop.abort,
    });
    if (result === 'stopped') return { exitCode: null, signal: ctx.stop.signal };
    if (result === 'timeout')
      return failed(`http request ${method} ${url.href} timed out after ${timeoutSec}s (timeout)`);
    if ('error' in result)
      return failed(`http request ${method} ${url.href} failed: ${result.error}`);

    const ok = result.status >= 200 && result.status < 300;
    const out = await emitOutput(ctx, render(result, config, ok));
    if (!ok) return { ...failed(`http status code not 2xx: ${result.status}`, 1), ...out };
    return { exitCode: 0, signal: null, ...out };
  }
}

/** The step's output text (as the peer does). */
const render = (r: HttpResponse, config: HttpConfig, ok: boolean): string => {
  const body = r.body === '' || r.body.endsWith('\n') ? r.body : `${r.body}\n`;
  if (config.json === true) {
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(r.headers)) if (v !== undefined) headers[k] = v;
    return `${JSON.stringify({ status_code: r.status, headers, body: r.body }, null, 2)}\n`;
  }
  if (config.silent === true && ok) return body;
  const lines = [`HTTP/${r.httpVersion} ${r.status} ${r.statusText}`];
  for (let i = 0; i + 1 < r.rawHeaders.length; i += 2)
    lines.push(`${r.rawHeaders[i] ?? ''}: ${r.rawHeaders[i + 1] ?? ''}`);
  return `${lines.join('\n')}\n\n${body}`;
};

interface SendOptions {
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly body: string | undefined;
  readonly timeoutMs: number;
  readonly insecure: boolean;
  readonly abort: AbortSignal;
}

/** One request; failures come back as values (`timeout`, `stopped`, `{error}`). */
const send = (
  url: URL,
  o: SendOptions,
): Promise<HttpResponse | 'timeout' | 'stopped' | { error: string }> =>
  new Promise((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const settle = (r: HttpResponse | 'timeout' | 'stopped' | { error: string }): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      o.abort.removeEventListener('abort', onAbort);
      resolve(r);
    };
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = request(url, {
      method: o.method,
      headers: o.headers,
      ...(url.protocol === 'https:' ? { rejectUnauthorized: !o.insecure } : {}),
    });
    const onAbort = (): void => {
      req.destroy();
      settle('stopped');
    };
    o.abort.addEventListener('abort', onAbort, { once: true });
    // One deadline for connect, headers and body together (the spec's `timeout` in seconds).
    if (o.timeoutMs > 0)
      timer = setTimeout(() => {
        req.destroy();
        settle('timeout');
      }, o.timeoutMs);
    req.on('error', (e) => settle({ error: e.message }));
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', (e) => settle({ error: e.message }));
      res.on('end', () =>
        settle({
          status: res.statusCode ?? 0,
          statusText: res.statusMessage ?? '',
          httpVersion: res.httpVersion,
          headers: res.headers,
          rawHeaders: res.rawHeaders,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    if (o.body !== undefined) req.write(o.body);
    req.end();
  });
