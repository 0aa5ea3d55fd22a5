import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunStatus } from '@trellis/core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runDagText } from '../../test/support/run-dag.js';
import { attachmentText, startSmtpSink, type SmtpSink } from '../../test/support/smtp-sink.js';
import { MailNotifier } from './mail-notifier.js';

const notifier = new MailNotifier();
let sink: SmtpSink;
let root: string;
let dir: string;
let n = 0;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'trellis-notify-'));
  sink = await startSmtpSink();
}, 60_000);
beforeEach(() => {
  dir = join(root, String(++n));
});
afterAll(async () => {
  await sink.close();
  await rm(root, { recursive: true, force: true });
});

const mailSettings = (port: number) => `
smtp:
  host: 127.0.0.1
  port: "${port}"
errorMail:
  from: trellis@example.com
  to: [oncall@example.com, lead@example.com]
  prefix: "[ALERT]"
  attachLogs: true
infoMail:
  from: trellis@example.com
  to: team@example.com
  prefix: "[INFO]"
`;

describe('mail notifications (engine run hooks, real SMTP server)', { timeout: 30_000 }, () => {
  it('sends errorMail with the logs attached when a run fails (mailOn.failure)', async () => {
    const before = sink.mails.length;
    const { record, recorder } = await runDagText(
      `name: nightly\nmailOn:\n  failure: true\n  success: true\n${mailSettings(sink.port)}steps:\n  - name: extract\n    command: echo extracted 3 rows\n  - name: load\n    command: sh -c 'echo load broke >&2; exit 4'\n`,
      dir,
      { runHooks: [notifier] },
    );
    expect(record.status).toBe(RunStatus.Failed);
    await sink.until(before + 1);
    expect(sink.mails).toHaveLength(before + 1); // the run is finished: no info mail follows
    const m = sink.mails[before];
    expect(m?.to).toEqual(['oncall@example.com', 'lead@example.com']);
    expect(m?.raw).toContain('Subject: [ALERT] nightly (failed)');
    expect(m?.raw).toContain('<td>load</td><td>failed</td>');
    expect(attachmentText(m?.raw ?? '', 'extract.out')).toBe('extracted 3 rows\n');
    expect(attachmentText(m?.raw ?? '', 'load.err')).toBe('load broke\n');
    expect(attachmentText(m?.raw ?? '', 'run.log')).toContain('step "load" started');
    expect(recorder.lines).toContain(
      'mailOn.failure: mail sent to oncall@example.com, lead@example.com',
    );
  });

  it('sends infoMail when a run finishes (mailOn.success), and nothing when mailOn is off', async () => {
    const before = sink.mails.length;
    const ok = await runDagText(
      `name: report\nmailOn:\n  success: true\n${mailSettings(sink.port)}steps:\n  - echo fine\n`,
      dir,
      { runHooks: [notifier] },
    );
    expect(ok.record.status).toBe(RunStatus.Succeeded);
    await sink.until(before + 1);
    const m = sink.mails[before];
    expect(m?.to).toEqual(['team@example.com']);
    expect(m?.raw).toContain('Subject: [INFO] report (finished)');
    expect(m?.raw).not.toContain('filename='); // infoMail has no attachLogs

    const quiet = await runDagText(
      `name: quiet\n${mailSettings(sink.port)}steps:\n  - sh -c 'exit 1'\n`,
      join(dir, 'quiet'),
      { runHooks: [notifier] },
    );
    expect(quiet.record.status).toBe(RunStatus.Failed);
    expect(sink.mails).toHaveLength(before + 1);
  });

  it("sends errorMail for a failing step with mailOnError, with that step's logs", async () => {
    const before = sink.mails.length;
    const { record } = await runDagText(
      `name: steps\n${mailSettings(sink.port)}steps:\n  - name: flaky\n    command: sh -c 'echo flaky out; exit 2'\n    mailOnError: true\n    continueOn:\n      failure: true\n  - name: quiet\n    command: sh -c 'exit 3'\n`,
      dir,
      { runHooks: [notifier] },
    );
    expect(record.status).toBe(RunStatus.Failed);
    await sink.until(before + 1);
    expect(sink.mails).toHaveLength(before + 1); // only flaky has mailOnError; mailOn is off
    const raw = sink.mails[before]?.raw ?? '';
    expect(raw).toContain('Subject: [ALERT] steps (step flaky failed)');
    expect(attachmentText(raw, 'flaky.err')).toBeUndefined(); // empty
    expect(attachmentText(raw, 'flaky.out')).toBe('flaky out\n');
    expect(attachmentText(raw, 'quiet.out')).toBeUndefined();
  });

  it('logs a mail that cannot be sent and keeps the run outcome', async () => {
    const { record, recorder } = await runDagText(
      `name: unreachable\nmailOn:\n  success: true\n${mailSettings(1)}steps:\n  - echo fine\n`,
      dir,
      { runHooks: [notifier] },
    );
    expect(record.status).toBe(RunStatus.Succeeded);
    expect(recorder.lines.join('\n')).toMatch(
      /mailOn.success: mail to team@example.com not sent: .*ECONNREFUSED/,
    );
  });

  it('says when a notification has no settings to send with', async () => {
    const { record, recorder } = await runDagText(
      'name: nosmtp\nmailOn:\n  failure: true\nerrorMail:\n  from: a@example.com\n  to: b@example.com\nsteps:\n  - sh -c "exit 1"\n',
      dir,
      { runHooks: [notifier] },
    );
    expect(record.status).toBe(RunStatus.Failed);
    expect(recorder.lines).toContain('mailOn.failure: no mail sent, the DAG has no smtp settings');
  });
});
