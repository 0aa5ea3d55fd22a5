import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** One message the sink received. */
export interface ReceivedMail {
  readonly from: string;
  readonly to: string[];
  /** The raw RFC 5322 message. */
  readonly raw: string;
}

/** An SMTP server in the test process. */
export interface SmtpSink {
  readonly port: number;
  readonly mails: ReceivedMail[];
  /** Resolves once `count` mails arrived in total. */
  until(count: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts an SMTP sink on 127.0.0.1. STARTTLS is disabled (smtp-server's built-in certificate has
 * expired); with `auth` the sink requires that username and password.
 */
export const startSmtpSink = async (auth?: {
  username: string;
  password: string;
}): Promise<SmtpSink> => {
  const mails: ReceivedMail[] = [];
  let waiters: { count: number; resolve: () => void }[] = [];
  const server = new SMTPServer({
    authOptional: auth === undefined,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth(a, _session, cb) {
      if (auth && a.username === auth.username && a.password === auth.password)
        cb(null, { user: a.username });
      else cb(new Error('Invalid username or password'));
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const from = session.envelope.mailFrom;
        mails.push({
          from: from === false ? '' : from.address,
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString(),
        });
        waiters = waiters.filter((w) => {
          if (mails.length < w.count) return true;
          w.resolve();
          return false;
        });
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    port,
    mails,
    until: (count) =>
      mails.length >= count
        ? Promise.resolve()
        : new Promise((resolve) => waiters.push({ count, resolve })),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
};

/** The decoded text of a base64 MIME part whose headers contain `marker`. */
export const attachmentText = (raw: string, filename: string): string | undefined => {
  const parts = raw.split(/\r?\n--/);
  const part = parts.find(
    (p) => p.includes(`filename=${filename}`) || p.includes(`filename="${filename}"`),
  );
  if (!part) return undefined;
  const body = part
    .split(/\r?\n\r?\n/)
    .slice(1)
    .join('\n')
    .replace(/\s+/g, '');
  return Buffer.from(body, 'base64').toString();
};
