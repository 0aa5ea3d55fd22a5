import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunStatus } from '@trellis/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExecutorSet } from './executor-set.js';
import { BUSYBOX } from '../test/support/docker-fixtures.js';
import { runDagText } from '../test/support/run-dag.js';
import { startSmtpSink, type SmtpSink } from '../test/support/smtp-sink.js';

let dir: string;
let sink: SmtpSink;
let server: Server;
let port: number;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'trellis-set-'));
  sink = await startSmtpSink();
  server = createServer((_req, res) => res.end('{"items":[{"n":1},{"n":2},{"n":3}]}'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
}, 60_000);
afterAll(async () => {
  await sink.close();
  await new Promise((r) => server.close(r));
  await rm(dir, { recursive: true, force: true });
});

describe('the executor set the composition root wires', { timeout: 30_000 }, () => {
  it('runs container, http, jq, shell and mail steps in one run and mails the result', async () => {
    const set = createExecutorSet();
    const { record } = await runDagText(
      `
name: set-e2e
container:
  image: ${BUSYBOX}
  pullPolicy: never
mailOn:
  success: true
smtp:
  host: 127.0.0.1
  port: "${sink.port}"
infoMail:
  from: trellis@example.com
  to: team@example.com
steps:
  - name: in-container
    command: sh -c 'test -f /.dockerenv && echo in a container'
  - name: fetch
    executor:
      type: http
      config:
        silent: true
    command: GET http://127.0.0.1:${port}/items
    output: BODY
  - name: count
    executor:
      type: jq
      config:
        raw: true
    command: .items | map(.n) | add
    script: \${BODY}
    output: TOTAL
  - name: report
    executor: shell
    command: echo "total \${TOTAL}"
  - name: tell
    executor:
      type: mail
      config:
        to: ops@example.com
        from: trellis@example.com
        subject: total
        message: total is \${TOTAL}
`,
      dir,
      { executors: set.executors, runHooks: set.runHooks },
    );
    expect(record.nodes.map((n) => [n.step.name, n.error])).toEqual([
      ['in-container', ''],
      ['fetch', ''],
      ['count', ''],
      ['report', ''],
      ['tell', ''],
    ]);
    expect(record.status).toBe(RunStatus.Succeeded);
    expect(await readFile(join(dir, 'logs', 'in-container.out'), 'utf8')).toBe('in a container\n');
    expect(await readFile(join(dir, 'logs', 'report.out'), 'utf8')).toBe('total 6\n');
    await sink.until(2);
    expect(sink.mails.map((m) => m.to)).toEqual([['ops@example.com'], ['team@example.com']]);
    expect(sink.mails[0]?.raw).toContain('total is 6');
  });
});
