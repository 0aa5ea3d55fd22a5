import { stat } from 'node:fs/promises';
import { NodeStatus, RunStatus, nodeStatusLabel, runStatusLabel } from '@trellis/core';
import type { RunHook, RunHookContext, RunResources } from '@trellis/engine';
import {
  HANDLER_RECORD_KEYS,
  type Dag,
  type DagRunRecord,
  type MailSpec,
  type NodeRecord,
} from '@trellis/spec';
import { NodemailerTransport, type MailTransport } from './mail-transport.js';
import { expandSmtp } from './mail.executor.js';

const escapeHtml = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The run's nodes as an HTML table (peer: the notification body lists every step). */
export const renderRunHtml = (dag: Dag, r: DagRunRecord): string => {
  const nodes = [...r.nodes, ...HANDLER_RECORD_KEYS.flatMap((k) => (r[k] ? [r[k]] : []))];
  const rows = nodes
    .map(
      (n) =>
        `<tr><td>${escapeHtml(n.step.name)}</td><td>${nodeStatusLabel[n.status]}</td><td>${n.startedAt}</td><td>${n.finishedAt}</td><td>${escapeHtml(n.error)}</td></tr>`,
    )
    .join('\n');
  return [
    `<h2>${escapeHtml(dag.name)}: ${runStatusLabel[r.status]}</h2>`,
    `<p>run ${escapeHtml(r.dagRunId)}, started ${r.startedAt}, finished ${r.finishedAt || '-'}${r.error ? `, ${escapeHtml(r.error)}` : ''}</p>`,
    '<table border="1" cellpadding="4"><tr><th>step</th><th>status</th><th>started</th><th>finished</th><th>error</th></tr>',
    rows,
    '</table>',
  ].join('\n');
};

/** The run log and the log files of `nodes`, for `attachLogs`: existing, non-empty files only. */
const logsOf = async (r: DagRunRecord, nodes: readonly NodeRecord[]): Promise<string[]> => {
  const paths = [r.log, ...nodes.flatMap((n) => [n.stdout, n.stderr])].filter((p) => p !== '');
  const sizes = await Promise.all(
    paths.map((p) =>
      stat(p).then(
        (s) => s.size,
        () => 0,
      ),
    ),
  );
  return paths.filter((_, i) => (sizes[i] ?? 0) > 0);
};

/**
 * The mail notifications of a run (spec: Events, rule 2): `mailOn.failure` sends `errorMail`
 * when the run failed, `mailOn.success` sends `infoMail` when it finished or partially
 * succeeded, and a step with `mailOnError` sends `errorMail` when it fails. Every mail goes
 * through the DAG's `smtp`; a mail that cannot be sent is a line in the run log and never
 * changes the run's outcome.
 */
export class MailNotifier implements RunHook {
  constructor(private readonly transport: MailTransport = new NodemailerTransport()) {}

  setUp(ctx: RunHookContext): Promise<RunResources> {
    const { dag } = ctx;
    const wantsRun = dag.mailOn.success || dag.mailOn.failure;
    const wantsSteps = [...dag.steps, ...Object.values(dag.handlerOn)].some((s) => s.mailOnError);
    if (!wantsRun && !wantsSteps) return Promise.resolve({});

    const send = async (
      what: string,
      mail: MailSpec | undefined,
      subject: string,
      r: DagRunRecord,
      attach: readonly NodeRecord[],
    ): Promise<void> => {
      if (!mail) {
        ctx.log(
          `${what}: no mail sent, the DAG has no ${what.includes('success') ? 'infoMail' : 'errorMail'} settings`,
        );
        return;
      }
      if (!dag.smtp) {
        ctx.log(`${what}: no mail sent, the DAG has no smtp settings`);
        return;
      }
      try {
        await this.transport.send(expandSmtp(dag.smtp, ctx.env), {
          from: mail.from,
          to: mail.to,
          subject: [mail.prefix, subject].filter(Boolean).join(' '),
          body: renderRunHtml(dag, r),
          contentType: 'text/html',
          attachments: mail.attachLogs ? await logsOf(r, attach) : [],
        });
        ctx.log(`${what}: mail sent to ${mail.to.join(', ')}`);
      } catch (e) {
        ctx.log(`${what}: mail to ${mail.to.join(', ')} not sent: ${(e as Error).message}`);
      }
    };

    return Promise.resolve({
      nodeFinished: async (n: NodeRecord): Promise<void> => {
        if (!n.step.mailOnError || n.status !== NodeStatus.Failed) return;
        await send(
          `mailOnError of step "${n.step.name}"`,
          dag.errorMail,
          `${dag.name} (step ${n.step.name} failed)`,
          ctx.record,
          [n],
        );
      },
      runFinished: async (r: DagRunRecord): Promise<void> => {
        const nodes = [...r.nodes, ...HANDLER_RECORD_KEYS.flatMap((k) => (r[k] ? [r[k]] : []))];
        const subject = `${dag.name} (${runStatusLabel[r.status]})`;
        if (r.status === RunStatus.Failed && dag.mailOn.failure)
          await send('mailOn.failure', dag.errorMail, subject, r, nodes);
        const ok = r.status === RunStatus.Succeeded || r.status === RunStatus.PartiallySucceeded;
        if (ok && dag.mailOn.success) await send('mailOn.success', dag.infoMail, subject, r, nodes);
      },
    });
  }
}
