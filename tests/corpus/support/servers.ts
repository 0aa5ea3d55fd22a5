import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/*
 * The servers the corpus DAGs talk to, started by the runner on 127.0.0.1: a small "ops API" for
 * the http steps and webhooks, and an SMTP sink for the mail steps and notifications. DAG files
 * name them with the placeholders {{api}} and {{smtp_port}} (tests/corpus/README.md).
 */

/** One request the ops API received. */
export interface ReceivedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: string;
}

export interface OpsApi {
  readonly url: string;
  readonly requests: ReceivedRequest[];
  /** Forgets the requests and the flaky counters (between DAGs). */
  reset(): void;
  close(): Promise<void>;
}

const RELEASE = {
  version: '2.4.1',
  commit: '9f2c1ab',
  artifacts: [
    { name: 'api', sha256: 'a1b2c3' },
    { name: 'worker', sha256: 'd4e5f6' },
  ],
};

const json = (res: ServerResponse, status: number, body: unknown): void => {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
};

/**
 * Routes: GET /health; GET /releases/latest (a release as JSON); POST /deployments (201 with an
 * id and the posted JSON); POST /hooks/<any> (a webhook: 200 `ok`); GET /flaky/<key>?fails=N
 * (503 for the first N calls per key, then 200 `recovered after N`); GET /status/<code>; GET
 * /echo (the query and headers as JSON). Anything else: 404.
 */
const route = (
  req: ReceivedRequest,
  url: URL,
  res: ServerResponse,
  flaky: Map<string, number>,
  deployments: { n: number },
): void => {
  const [, first, second] = url.pathname.split('/');
  if (req.method === 'GET' && url.pathname === '/health') return json(res, 200, { status: 'ok' });
  if (req.method === 'GET' && url.pathname === '/releases/latest') return json(res, 200, RELEASE);
  if (req.method === 'POST' && url.pathname === '/deployments') {
    deployments.n += 1;
    return json(res, 201, { id: `dep-${deployments.n}`, accepted: JSON.parse(req.body || '{}') });
  }
  if (req.method === 'POST' && first === 'hooks') {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    return void res.end('ok');
  }
  if (req.method === 'GET' && first === 'flaky' && second) {
    const seen = (flaky.get(second) ?? 0) + 1;
    flaky.set(second, seen);
    const fails = Number(url.searchParams.get('fails') ?? '0');
    if (seen <= fails) return json(res, 503, { error: `try again (${seen})` });
    return json(res, 200, { status: `recovered after ${fails}` });
  }
  if (req.method === 'GET' && first === 'status' && second)
    return json(res, Number(second), { status: Number(second) });
  if (req.method === 'GET' && url.pathname === '/echo')
    return json(res, 200, {
      query: Object.fromEntries(url.searchParams),
      token: req.headers.authorization ?? '',
    });
  json(res, 404, { error: `no route for ${req.method} ${url.pathname}` });
};

export const startOpsApi = async (): Promise<OpsApi> => {
  const requests: ReceivedRequest[] = [];
  const flaky = new Map<string, number>();
  const deployments = { n: 0 };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const got = {
        method: req.method ?? '',
        path: url.pathname,
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      };
      requests.push(got);
      route(got, url, res, flaky, deployments);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    reset: () => {
      requests.length = 0;
      flaky.clear();
      deployments.n = 0;
    },
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r()));
    },
  };
};

/** One message the SMTP sink received. */
export interface ReceivedMail {
  readonly to: string[];
  /** The raw RFC 5322 message. */
  readonly raw: string;
}

export interface SmtpSink {
  readonly port: number;
  readonly mails: ReceivedMail[];
  close(): Promise<void>;
}

/** An SMTP sink on 127.0.0.1 (STARTTLS off: smtp-server's built-in certificate has expired). */
export const startSmtpSink = async (): Promise<SmtpSink> => {
  const mails: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mails.push({
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString(),
        });
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return { port, mails, close: () => new Promise((r) => server.close(() => r())) };
};

const decodePart = (part: string): string => {
  const [head = '', ...rest] = part.split(/\r?\n\r?\n/);
  const body = rest.join('\n\n');
  if (/content-transfer-encoding:\s*base64/i.test(head))
    return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString();
  if (/content-transfer-encoding:\s*quoted-printable/i.test(head))
    return body
      .replace(/=\r?\n/g, '')
      .replace(/=([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  return body;
};

/**
 * The subject and the decoded text of a raw message: every text part (not attachments), joined.
 * Enough for the messages nodemailer writes (base64 or quoted-printable parts, one level of
 * multipart nesting).
 */
export const mailText = (raw: string): { subject: string; body: string } => {
  const subject = /^Subject: (.*)$/m.exec(raw)?.[1]?.trim() ?? '';
  const parts = raw.split(/\r?\n--[^\r\n]+\r?\n/);
  const texts = parts
    .filter(
      (p) => /content-type:\s*text\//i.test(p) && !/content-disposition:\s*attachment/i.test(p),
    )
    .map(decodePart);
  return { subject, body: texts.join('\n') };
};
