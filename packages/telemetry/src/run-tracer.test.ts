import { describe, expect, it } from 'vitest';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { NodeStatus, RunStatus } from '@trellis/core';
import type { RunHookContext, RunResources } from '@trellis/engine';
import { parseDagFile, type Dag, type DagRunRecord, type NodeRecord } from '@trellis/spec';
import { makeRunRecord } from '@trellis/testkit';
import { RunTracer } from './run-tracer.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

const dagOf = (yaml: string): Dag => parseDagFile(yaml).main.dag;
const rec = (
  name: string,
  dagRunId = 'run-0001',
  over: Partial<DagRunRecord> = {},
): DagRunRecord => ({
  ...makeRunRecord(dagOf(`name: ${name}\nsteps: [echo]\n`), dagRunId),
  ...over,
});
const OTEL = 'otel:\n  enabled: true\n  endpoint: http://127.0.0.1:4318\n';

const setUp = (
  t: RunTracer,
  dag: Dag,
  record: DagRunRecord,
  log: string[] = [],
): Promise<RunResources> =>
  t.setUp({
    dag,
    record,
    workingDir: '/tmp',
    env: {},
    log: (l) => log.push(l),
    abort: new AbortController().signal,
  } satisfies RunHookContext);

const tracerWith = (opts: { inheritedTraceparent?: string } = {}) => {
  const exporter = new InMemorySpanExporter();
  const tracer = new RunTracer({
    serviceVersion: 't',
    warn: () => undefined,
    exporterFor: () => exporter,
    ...opts,
  });
  return { tracer, exporter };
};

const node = (name: string, over: Partial<NodeRecord> = {}): NodeRecord =>
  ({
    step: { name },
    stdout: '',
    stderr: '',
    startedAt: '2026-01-01T00:00:01.000Z',
    finishedAt: '2026-01-01T00:00:02.000Z',
    status: NodeStatus.Succeeded,
    retryCount: 0,
    doneCount: 1,
    retriedAt: '',
    children: [],
    childrenRepeated: [],
    error: '',
    outputs: {},
    ...over,
  }) as NodeRecord;

describe('RunTracer', () => {
  it('holds nothing for a DAG whose otel is absent or disabled', async () => {
    const { tracer } = tracerWith();
    const record = rec('a');
    expect(await setUp(tracer, dagOf('name: a\nsteps: [echo]\n'), record)).toEqual({});
    expect(
      await setUp(
        tracer,
        dagOf('name: a\notel:\n  enabled: false\n  endpoint: http://x\nsteps: [echo]\n'),
        record,
      ),
    ).toEqual({});
  });

  it("continues the process's TRACEPARENT for a top-level run", async () => {
    const { tracer, exporter } = tracerWith({
      inheritedTraceparent: `00-${TRACE}-00f067aa0ba902b7-01`,
    });
    const record = rec('a', 'run-0001', { startedAt: '2026-01-01T00:00:00.000Z' });
    const res = await setUp(tracer, dagOf(`name: a\n${OTEL}steps: [echo]\n`), record);
    const env = res.nodeStarted?.(node('s1'));
    expect(env?.TRACEPARENT).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`));
    await res.nodeFinished?.(node('s1', { status: NodeStatus.Failed, error: 'boom', exitCode: 7 }));
    await res.runFinished?.({
      ...record,
      status: RunStatus.Failed,
      finishedAt: '2026-01-01T00:00:03.000Z',
    });
    await tracer.forceFlush();
    const spans = exporter.getFinishedSpans();
    const run = spans.find((s) => s.name === 'run a');
    const step = spans.find((s) => s.name === 'step s1');
    expect(run?.spanContext().traceId).toBe(TRACE);
    expect(run?.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
    expect(step?.parentSpanContext?.spanId).toBe(run?.spanContext().spanId);
    expect(step?.attributes).toMatchObject({ 'step.exit_code': 7, 'step.status': 'failed' });
    expect(step?.status).toEqual({ code: 2, message: 'boom' });
    expect(run?.status.code).toBe(2);
  });

  it('lets a child DAG without otel inherit its parent run, and one with otel disabled opt out', async () => {
    const { tracer, exporter } = tracerWith();
    const parent = rec('p', 'r1');
    const res = await setUp(tracer, dagOf(`name: p\n${OTEL}steps: [echo]\n`), parent);
    const tp = res.nodeStarted?.(node('call'))?.TRACEPARENT;
    // the parent's step must hand a traceparent on, else the child has nothing to inherit
    expect(tp).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const childRecord = (id: string, name: string): DagRunRecord => ({
      ...rec(name, id),
      root: { name: 'p', dagRunId: 'r1' },
      parent: { name: 'p', dagRunId: 'r1' },
      ...(tp === undefined ? {} : { traceparent: tp }),
    });
    const inherited = await setUp(
      tracer,
      dagOf('name: c\nsteps: [echo]\n'),
      childRecord('c1', 'c'),
    );
    expect(inherited.nodeStarted).toBeDefined();
    const optedOut = await setUp(
      tracer,
      dagOf('name: d\notel:\n  enabled: false\nsteps: [echo]\n'),
      childRecord('c2', 'd'),
    );
    expect(optedOut).toEqual({});
    await inherited.runFinished?.({ ...childRecord('c1', 'c'), status: RunStatus.Succeeded });
    await tracer.forceFlush();
    const child = exporter.getFinishedSpans().find((s) => s.name === 'run c');
    expect(child).toBeDefined();
    expect(child?.spanContext().traceId).toBe(tp?.split('-')[1]);
    expect(child?.parentSpanContext?.spanId).toBe(tp?.split('-')[2]);
  });

  it('ends a step that never started with a span of zero length', async () => {
    const { tracer, exporter } = tracerWith();
    const record = rec('a');
    const res = await setUp(tracer, dagOf(`name: a\n${OTEL}steps: [echo]\n`), record);
    await res.nodeFinished?.(
      node('later', {
        status: NodeStatus.Skipped,
        startedAt: '',
        finishedAt: '',
      }),
    );
    await res.runFinished?.({ ...record, status: RunStatus.Succeeded });
    await tracer.forceFlush();
    const s = exporter.getFinishedSpans().find((x) => x.name === 'step later');
    expect(s).toBeDefined();
    expect(s?.startTime).toEqual(s?.endTime);
    expect(s?.attributes['step.status']).toBe('skipped');
  });
});
