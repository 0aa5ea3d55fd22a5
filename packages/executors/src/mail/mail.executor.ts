import { isAbsolute, resolve } from 'node:path';
import { expandHome, homeOf } from '@trellis/core';
import type { ExecContext, ExecutionOutcome, Executor } from '@trellis/engine';
import { expandVarsSync } from '@trellis/engine';
import type { SmtpSpec } from '@trellis/spec';
import { failed, writeText } from '../common/outcome.js';
import { NodemailerTransport, type MailTransport } from './mail-transport.js';
import { runLogFiles } from './run-logs.js';

/** The mail executor's config as the spec package compiles it (spec: Executors). */
interface MailConfig {
  readonly to: readonly string[];
  readonly from: string;
  readonly subject: string;
  /** `message`, or the handler form's `body`. */
  readonly message: string;
  /** @default 'text/plain' */
  readonly contentType: string;
  /** Paths, relative to the step's directory. */
  readonly attachments: readonly string[];
  /** Attach the run's log files (handler form). @default false */
  readonly attachLogs: boolean;
}

/** The DAG's `smtp` with `${VAR}` references resolved against the step's environment. */
export const expandSmtp = (smtp: SmtpSpec, env: Readonly<Record<string, string>>): SmtpSpec => {
  const x = (t: string): string => expandVarsSync(t, [env]);
  return {
    host: x(smtp.host),
    port: x(smtp.port),
    ...(smtp.username !== undefined ? { username: x(smtp.username) } : {}),
    ...(smtp.password !== undefined ? { password: x(smtp.password) } : {}),
  };
};

/**
 * `executor: mail` (spec: Executors): sends `message` from `from` to `to` with `subject`,
 * `contentType` and `attachments` through the DAG's `smtp` server; `attachLogs` adds the run's
 * log files. A send that fails fails the step with the server's answer.
 */
export class MailExecutor implements Executor {
  constructor(private readonly transport: MailTransport = new NodemailerTransport()) {}

  async run(ctx: ExecContext): Promise<ExecutionOutcome> {
    const c = ctx.step.executor.config as unknown as MailConfig;
    if (!ctx.dag.smtp)
      return failed("mail step needs the DAG's smtp settings: add smtp with host and port");
    const home = homeOf(ctx.env);
    const attachments = c.attachments.map((written) => {
      const p = expandHome(written, home);
      return isAbsolute(p) ? p : resolve(ctx.cwd, p);
    });
    if (c.attachLogs) attachments.push(...(await runLogFiles(ctx.env.DAG_RUN_LOG_FILE ?? '')));
    if (ctx.stop.abort.aborted) return failed('the step was stopped before it started');
    try {
      const { messageId } = await this.transport.send(expandSmtp(ctx.dag.smtp, ctx.env), {
        from: c.from,
        to: c.to,
        subject: c.subject,
        body: c.message,
        contentType: c.contentType,
        attachments,
      });
      await writeText(
        ctx.stdout,
        `mail sent to ${c.to.join(', ')}${attachments.length > 0 ? ` with ${attachments.length} attachment(s)` : ''} (${messageId})\n`,
      );
      return { exitCode: 0, signal: null };
    } catch (e) {
      return failed(`mail to ${c.to.join(', ')} not sent: ${(e as Error).message}`);
    }
  }
}
