import { basename } from 'node:path';
import type { SmtpSpec } from '@trellis/spec';
import { createTransport } from 'nodemailer';

/** One message to send. */
export interface MailMessage {
  readonly from: string;
  readonly to: readonly string[];
  readonly subject: string;
  readonly body: string;
  /** `text/html` sends `body` as HTML, anything else as plain text. @default 'text/plain' */
  readonly contentType?: string;
  /** Files attached by path; the file name is the attachment's name. */
  readonly attachments?: readonly string[];
}

/** Sends mail through an SMTP server (docs/architecture.md, "Storage": the `MailTransport` port). */
export interface MailTransport {
  send(smtp: SmtpSpec, message: MailMessage): Promise<{ readonly messageId: string }>;
}

/**
 * nodemailer over SMTP: port 465 is TLS from the start, other ports upgrade with STARTTLS when
 * the server offers it; `username` turns on AUTH. Sends are bounded so a silent server cannot
 * hold a run open.
 */
export class NodemailerTransport implements MailTransport {
  constructor(private readonly timeoutMs = 30_000) {}

  async send(smtp: SmtpSpec, m: MailMessage): Promise<{ messageId: string }> {
    const port = Number(smtp.port);
    if (!smtp.host) throw new Error('smtp has no host: set smtp.host in the DAG');
    if (!Number.isInteger(port) || port < 1 || port > 65535)
      throw new Error(`smtp.port must be a port number, got "${smtp.port}"`);
    if (!m.from) throw new Error('the mail has no sender: set from');
    if (m.to.length === 0) throw new Error('the mail has no recipient: set to');
    const transport = createTransport({
      host: smtp.host,
      port,
      secure: port === 465,
      connectionTimeout: this.timeoutMs,
      greetingTimeout: this.timeoutMs,
      socketTimeout: this.timeoutMs,
      ...(smtp.username ? { auth: { user: smtp.username, pass: smtp.password ?? '' } } : {}),
    });
    try {
      const html = (m.contentType ?? 'text/plain').toLowerCase().startsWith('text/html');
      const info = (await transport.sendMail({
        from: m.from,
        to: [...m.to],
        subject: m.subject,
        ...(html ? { html: m.body } : { text: m.body }),
        attachments: (m.attachments ?? []).map((path) => ({ filename: basename(path), path })),
      })) as { messageId?: string };
      return { messageId: info.messageId ?? '' };
    } finally {
      transport.close();
    }
  }
}
