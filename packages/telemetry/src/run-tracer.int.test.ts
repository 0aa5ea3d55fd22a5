import { createLocalDispatcher } from '@trellis/dispatch';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunStatus, sequentialIdGenerator, systemClock } from '@trellis/core';
import { ShellCommandRunner, ShellExecutor } from '@trellis/executors';
import { RunService } from '@trellis/services';
import { DagFileLoader } from '@trellis/store';
import { FsRunStore, currentOwner, isOwnerAlive, processStartTime } from '@trellis/store';
import { RunTracer } from './run-tracer.js';
import { OtlpReceiver, type ReceivedSpan } from '../test/support/otlp-receiver.js';

let home: string;
let receiver: OtlpReceiver;
let tracer: RunTracer;
let warnings: string[];

const service = (t: RunTracer): { runs: RunService; store: FsRunStore } => {
  const store = new FsRunStore({
    dataDir: join(home, 'data'),
    logDir: join(home, 'logs'),
    clock: systemClock,
  });
  const runs: RunService = new RunService({
    store,
    dags: new DagFileLoader(join(home, 'dags')),
    clock: systemClock,
    ids: sequentialIdGenerator(),
    processes: { owner: currentOwner(), isOwnerAlive, processStartTime },
    local: createLocalDispatcher({
      clock: systemClock,
      executors: { shell: new ShellExecutor() },
      commands: new ShellCommandRunner(),
      systemEnv: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home },
      defaultShell: 'sh',
      runHooks: [t],
      store: store,
      children: () => runs,
    }),
  });
  return { runs, store };
};

const dag = (name: string, yaml: string): void =>
  writeFileSync(join(home, 'dags', `${name}.yaml`), yaml);

/** A loopback port nothing listens on. */
const deadPort = async (): Promise<number> => {
  const s = createServer().listen(0, '127.0.0.1');
  await new Promise((r) => s.once('listening', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
};

const named = (spans: readonly ReceivedSpan[], name: string): ReceivedSpan => {
  const s = spans.find((x) => x.name === name);
  if (!s) throw new Error(`no span "${name}" in ${spans.map((x) => x.name).join(', ')}`);
  return s;
};

beforeEach(async () => {
  home = mkdtempSync(join(tmpdir(), 'trellis-otel-'));
  mkdirSync(join(home, 'dags'));
  receiver = await OtlpReceiver.start();
  warnings = [];
  tracer = new RunTracer({
    serviceVersion: '0.1.0-test',
    warn: (m) => warnings.push(m),
    batchDelayMs: 20,
  });
});
afterEach(async () => {
  await tracer.shutdown();
  await receiver.close();
  rmSync(home, { recursive: true, force: true });
});

describe('tracing against an OTLP/HTTP receiver', () => {
  it('exports a run span, step and handler spans, and a child DAG run in the same trace (headers expanded from env)', async () => {
    dag(
      'traced',
      [
        'name: traced',
        'otel:',
        '  enabled: true',
        `  endpoint: ${receiver.endpoint}`,
        '  headers:',
        '    x-api-key: ${API_KEY}',
        '  resource:',
        '    deployment.environment: test',
        'env:',
        '  - API_KEY: secret-1',
        'steps:',
        '  - name: show',
        '    command: echo "$TRACEPARENT"',
        '    output: TP',
        '  - name: flaky',
        '    command: exit 3',
        '    retryPolicy: {limit: 1, intervalSec: 0}',
        '    continueOn: {failure: true}',
        '  - name: nested',
        '    run: sub',
        'handlerOn:',
        '  exit:',
        '    command: echo bye',
        '---',
        'name: sub',
        'steps:',
        '  - name: inner',
        '    command: echo "$TRACEPARENT"',
        '    output: INNER_TP',
        '',
      ].join('\n'),
    );
    const { runs, store } = service(tracer);
    const final = await (await runs.start({ dag: 'traced' })).done;
    expect(final.status).toBe(RunStatus.PartiallySucceeded);
    await tracer.forceFlush();
    const spans = await receiver.waitFor((s) => s.length >= 7);

    const run = named(spans, 'run traced');
    expect(run.parentSpanId).toBe('');
    expect(run.attributes).toMatchObject({
      'dag.name': 'traced',
      'dag.run.id': final.dagRunId,
      'dag.run.status': 'partial success',
      'dag.run.status_code': RunStatus.PartiallySucceeded,
    });
    expect(run.resource).toMatchObject({
      'service.name': 'trellis',
      'service.version': '0.1.0-test',
      'deployment.environment': 'test',
    });
    expect(receiver.requests[0]?.['x-api-key']).toBe('secret-1');
    expect(receiver.requests[0]?.['content-type']).toBe('application/x-protobuf');

    // every span is in the run's trace
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([run.traceId]));

    const show = named(spans, 'step show');
    expect(show.parentSpanId).toBe(run.spanId);
    expect(final.nodes.find((n) => n.step.name === 'show')?.outputs.TP).toBe(
      `00-${run.traceId}-${show.spanId}-01`,
    );

    const flaky = named(spans, 'step flaky');
    expect(flaky.parentSpanId).toBe(run.spanId);
    expect(flaky.attributes).toMatchObject({
      'step.name': 'flaky',
      'step.status': 'failed',
      'step.exit_code': 3,
      'step.retry_count': 1,
      'step.handler': false,
    });
    expect(flaky.statusCode).toBe(2);
    expect(flaky.statusMessage).toBe('exit status 3');

    const onExit = named(spans, 'step onExit');
    expect(onExit.parentSpanId).toBe(run.spanId);
    expect(onExit.attributes).toMatchObject({ 'step.handler': true, 'step.status': 'finished' });

    // the child run: its span is a child of the step that started it, its steps below it
    const nested = named(spans, 'step nested');
    const sub = named(spans, 'run sub');
    expect(sub.parentSpanId).toBe(nested.spanId);
    expect(sub.attributes).toMatchObject({
      'dag.name': 'sub',
      'dag.run.root_id': final.dagRunId,
      'dag.run.parent_id': final.dagRunId,
    });
    const inner = named(spans, 'step inner');
    expect(inner.parentSpanId).toBe(sub.spanId);
    const childId = final.nodes.find((n) => n.step.name === 'nested')?.children[0]?.dagRunId ?? '';
    const child = await store.getRun({ name: 'sub', dagRunId: childId }, { root: final.root });
    expect(child.traceparent).toBe(`00-${run.traceId}-${nested.spanId}-01`);
    expect(child.nodes[0]?.outputs.INNER_TP).toBe(`00-${run.traceId}-${inner.spanId}-01`);
    expect(warnings).toEqual([]);
  });

  it('traces nothing for a DAG without otel, and its steps get no TRACEPARENT', async () => {
    dag('plain', 'steps:\n  - name: a\n    command: echo "[$TRACEPARENT]"\n    output: OUT\n');
    const { runs } = service(tracer);
    const final = await (await runs.start({ dag: 'plain' })).done;
    expect(final.nodes[0]?.outputs.OUT).toBe('[]');
    await tracer.forceFlush();
    expect(receiver.spans).toEqual([]);
  });

  it('logs a dead collector and lets the run finish', async () => {
    const port = await deadPort();
    dag(
      'unseen',
      `otel:\n  enabled: true\n  endpoint: http://127.0.0.1:${port}\n  timeout: 2s\nsteps:\n  - name: a\n    command: echo hi\n`,
    );
    const { runs, store } = service(tracer);
    const final = await (await runs.start({ dag: 'unseen' })).done;
    expect(final.status).toBe(RunStatus.Succeeded);
    await tracer.forceFlush();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      new RegExp(
        `^trace export to http://127.0.0.1:${port}/v1/traces failed \\(.+\\); spans are dropped`,
      ),
    );
    expect((await store.getRun(final)).status).toBe(RunStatus.Succeeded);
  });

  it('with insecure, exports to an https collector whose certificate does not verify; without, refuses it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trellis-otel-tls-'));
    execFileSync(
      'openssl',
      [
        ...[
          'req',
          '-x509',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-days',
          '1',
          '-subj',
          '/CN=localhost',
        ],
        ...['-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')],
      ],
      { stdio: 'ignore' },
    );
    const secure = await OtlpReceiver.start({
      key: readFileSync(join(dir, 'key.pem'), 'utf8'),
      cert: readFileSync(join(dir, 'cert.pem'), 'utf8'),
    });
    try {
      expect(secure.endpoint).toMatch(/^https:/);
      const otel = (insecure: boolean): string =>
        `otel:\n  enabled: true\n  endpoint: ${secure.endpoint}\n  insecure: ${insecure}\n  timeout: 5s\n`;
      dag('trusting', `${otel(true)}steps:\n  - name: a\n    command: "true"\n`);
      dag('strict', `${otel(false)}steps:\n  - name: a\n    command: "true"\n`);
      const { runs } = service(tracer);
      const trusting = await (await runs.start({ dag: 'trusting' })).done;
      await tracer.forceFlush();
      const spans = await secure.waitFor((xs) => xs.some((x) => x.name === 'run trusting'));
      expect(spans.some((x) => x.name === 'step a')).toBe(true);
      expect(trusting.status).toBe(RunStatus.Succeeded);
      const strict = await (await runs.start({ dag: 'strict' })).done;
      await tracer.forceFlush();
      expect(strict.status).toBe(RunStatus.Succeeded); // a refused export never fails a run
      expect(secure.spans.some((x) => x.name === 'run strict')).toBe(false);
      expect(warnings.join('\n')).toMatch(/trace export to https:.* failed/);
    } finally {
      await secure.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('turns tracing off for a run whose endpoint is unusable, saying why in the run log', async () => {
    dag(
      'badurl',
      'otel:\n  enabled: true\n  endpoint: "grpc://collector:4317"\nsteps:\n  - name: a\n    command: echo hi\n',
    );
    const { runs, store } = service(tracer);
    const final = await (await runs.start({ dag: 'badurl' })).done;
    expect(final.status).toBe(RunStatus.Succeeded);
    const log = await store.readLog(final.log, { limit: 100 });
    expect(log.content).toContain(
      'tracing is off for this run: otel.endpoint "grpc://collector:4317" uses grpc',
    );
    expect(warnings).toHaveLength(1);
  });
});
