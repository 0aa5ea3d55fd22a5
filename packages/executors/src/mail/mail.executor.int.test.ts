import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stepContext } from '../../test/support/exec-context.js';
import { attachmentText, startSmtpSink, type SmtpSink } from '../../test/support/smtp-sink.js';
import { MailExecutor } from './mail.executor.js';

const mail = new MailExecutor();
let sink: SmtpSink;
let authSink: SmtpSink;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'trellis-mail-'));
  sink = await startSmtpSink();
  authSink = await startSmtpSink({ username: 'bot', password: 's3cret' });
}, 60_000);
afterAll(async () => {
  await Promise.all([sink.close(), authSink.close()]);
  await rm(dir, { recursive: true, force: true });
});

const mailStep = (
  config: Record<string, unknown>,
  smtp: Record<string, unknown> | undefined,
  env: Record<string, string> = {},
) =>
  stepContext(
    { executor: { type: 'mail', config }, command: 'send' },
    dir,
    { env },
    smtp ? { smtp } : {},
  );

describe('mail executor (nodemailer to a real SMTP server)', { timeout: 30_000 }, () => {
  it('sends to a list of recipients with subject, HTML body and attachments', async () => {
    await writeFile(join(dir, 'report.csv'), 'a,b\n1,2\n');
    const before = sink.mails.length;
    const t = mailStep(
      {
        to: ['ops@example.com', 'dev@example.com'],
        from: 'trellis@example.com',
        subject: 'nightly report',
        message: '<b>done</b>',
        contentType: 'text/html',
        attachments: ['report.csv'],
      },
      { host: '127.0.0.1', port: String(sink.port) },
    );
    const outcome = await mail.run(t.ctx);
    expect(outcome).toEqual({ exitCode: 0, signal: null });
    expect(t.out.text).toMatch(
      /^mail sent to ops@example.com, dev@example.com with 1 attachment\(s\)/,
    );
    await sink.until(before + 1);
    const m = sink.mails[before];
    expect(m?.from).toBe('trellis@example.com');
    expect(m?.to).toEqual(['ops@example.com', 'dev@example.com']);
    expect(m?.raw).toContain('Subject: nightly report');
    expect(m?.raw).toMatch(/Content-Type: text\/html/);
    expect(m?.raw).toContain('<b>done</b>');
    expect(attachmentText(m?.raw ?? '', 'report.csv')).toBe('a,b\n1,2\n');
  });

  it('reads an attachment named ~/x from the step home directory (its HOME)', async () => {
    const home = join(dir, 'home-of-step');
    await mkdir(home, { recursive: true });
    await writeFile(join(home, 'notes.txt'), 'from home\n');
    const before = sink.mails.length;
    const t = mailStep(
      { to: 'h@example.com', from: 'f@example.com', subject: 's', attachments: ['~/notes.txt'] },
      { host: '127.0.0.1', port: String(sink.port) },
      { HOME: home },
    );
    expect(await mail.run(t.ctx)).toEqual({ exitCode: 0, signal: null });
    await sink.until(before + 1);
    expect(attachmentText(sink.mails[before]?.raw ?? '', 'notes.txt')).toBe('from home\n');
  });

  it('accepts one address as to, and plain text by default', async () => {
    const before = sink.mails.length;
    const outcome = await mail.run(
      mailStep(
        { to: 'one@example.com', from: 'f@example.com', subject: 's', message: 'plain words' },
        { host: '127.0.0.1', port: String(sink.port) },
      ).ctx,
    );
    expect(outcome.exitCode).toBe(0);
    await sink.until(before + 1);
    expect(sink.mails[before]?.to).toEqual(['one@example.com']);
    expect(sink.mails[before]?.raw).toMatch(/Content-Type: text\/plain/);
  });

  it('attaches the run log and step logs with attachLogs (handler form with body)', async () => {
    const logs = join(dir, 'logs-a');
    await mkdir(logs, { recursive: true });
    await writeFile(join(logs, 'run.log'), 'run started\n');
    await writeFile(join(logs, 'extract.out'), 'rows: 3\n');
    await writeFile(join(logs, 'extract.err'), '');
    const before = sink.mails.length;
    const outcome = await mail.run(
      mailStep(
        {
          to: 'ops@example.com',
          from: 'f@example.com',
          subject: 'logs',
          body: 'see logs',
          attachLogs: true,
        },
        { host: '127.0.0.1', port: String(sink.port) },
        { DAG_RUN_LOG_FILE: join(logs, 'run.log') },
      ).ctx,
    );
    expect(outcome.exitCode).toBe(0);
    await sink.until(before + 1);
    const raw = sink.mails[before]?.raw ?? '';
    expect(raw).toContain('see logs');
    expect(attachmentText(raw, 'run.log')).toBe('run started\n');
    expect(attachmentText(raw, 'extract.out')).toBe('rows: 3\n');
    expect(attachmentText(raw, 'extract.err')).toBeUndefined(); // empty files are left out
  });

  it('logs in with smtp username and password, expanding ${VAR} from the environment', async () => {
    const before = authSink.mails.length;
    const ok = await mail.run(
      mailStep(
        { to: 'a@example.com', from: 'bot@example.com', subject: 's', message: 'm' },
        {
          host: '127.0.0.1',
          port: String(authSink.port),
          username: 'bot',
          password: '${SMTP_PASSWORD}',
        },
        { SMTP_PASSWORD: 's3cret' },
      ).ctx,
    );
    expect(ok.exitCode).toBe(0);
    await authSink.until(before + 1);
    const denied = await mail.run(
      mailStep(
        { to: 'a@example.com', from: 'bot@example.com', subject: 's', message: 'm' },
        { host: '127.0.0.1', port: String(authSink.port), username: 'bot', password: 'wrong' },
      ).ctx,
    );
    expect(denied.exitCode).toBeNull();
    expect(denied.error).toMatch(/^mail to a@example.com not sent: .*Invalid username or password/);
  });

  it('fails clearly without smtp settings, and when the server is unreachable', async () => {
    const none = await mail.run(
      mailStep({ to: 'a@example.com', from: 'f@example.com', message: 'm' }, undefined).ctx,
    );
    expect(none.error).toBe("mail step needs the DAG's smtp settings: add smtp with host and port");
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const down = await mail.run(
      mailStep(
        { to: 'a@example.com', from: 'f@example.com', message: 'm' },
        { host: '127.0.0.1', port: String(port) },
      ).ctx,
    );
    expect(down.error).toMatch(/not sent: .*ECONNREFUSED/);
  });
});
