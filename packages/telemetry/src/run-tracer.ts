import type { Context, Span } from '@opentelemetry/api';
import { NodeStatus, RunStatus, nodeStatusLabel, runStatusLabel } from '@trellis/core';
import {
  expandVarsSync,
  type RunHook,
  type RunHookContext,
  type RunResources,
} from '@trellis/engine';
import {
  HANDLER_RECORD_KEYS,
  type DagRunRecord,
  type NodeRecord,
  type OtelSpec,
} from '@trellis/spec';
import type { ExportPipeline, ExporterFactory } from './export-pipeline.js';
import { pipelineKey } from './pipeline-key.js';
import { loadSdk, type Sdk } from './sdk.js';
import { Attr } from './span-attributes.js';
import { formatTraceparent, parseTraceparent } from './traceparent.js';

/** Options of {@link RunTracer}. */
export interface RunTracerOptions {
  /** Where export problems go (a dead collector): logged, never fatal. */
  readonly warn: (message: string) => void;
  /** `service.version` of the resource. */
  readonly serviceVersion: string;
  /**
   * The `TRACEPARENT` this process was started with (a traced CI job running `trellis start`, or
   * a step of another traced run): top-level runs continue that trace. @default none
   */
  readonly inheritedTraceparent?: string;
  /** Builds exporters; @default the OTLP HTTP/protobuf exporter */
  readonly exporterFor?: ExporterFactory;
  /** Delay between batch exports in ms. @default 1000 */
  readonly batchDelayMs?: number;
}

/** A traced run in this process. */
interface TracedRun {
  readonly otel: OtelSpec;
  readonly sdk: Sdk;
  readonly pipeline: ExportPipeline;
  readonly span: Span;
  readonly context: Context;
  /** Open step spans by node name. */
  readonly steps: Map<string, Span>;
}

const runKey = (r: Pick<DagRunRecord, 'root' | 'dagRunId'>): string =>
  `${r.root.dagRunId}/${r.dagRunId}`;

const timeOf = (iso: string): Date | undefined => {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? undefined : new Date(ms);
};

/**
 * OpenTelemetry tracing of DAG runs (spec: root field `otel`), as a run hook of the engine: a span
 * per run, a child span per step and handler, `TRACEPARENT` for step processes, and child DAG runs
 * in the parent step's trace (the engine passes the step's TRACEPARENT to the child run, which
 * keeps it in its record).
 *
 * A run is traced when its DAG sets `otel.enabled: true`; a child run whose DAG has no `otel`
 * inherits its parent's setting, so a nested workflow is one trace. Spans are exported in
 * batches in the background; a dead collector is reported through `warn` and never fails, slows
 * or blocks a run.
 */
export class RunTracer implements RunHook {
  readonly #opts: RunTracerOptions;
  readonly #runs = new Map<string, TracedRun>();
  readonly #pipelines = new Map<string, ExportPipeline>();
  /** Settings whose endpoint was reported unusable (once each). */
  readonly #reported = new Set<string>();

  constructor(opts: RunTracerOptions) {
    this.#opts = opts;
  }

  /** Starts the run's span; returns the step callbacks (none when the run is not traced). */
  async setUp(ctx: RunHookContext): Promise<RunResources> {
    try {
      const r = ctx.record;
      const parent = r.parent
        ? this.#runs.get(runKey({ root: r.root, dagRunId: r.parent.dagRunId }))
        : undefined;
      const written = ctx.dag.otel;
      const otel = written ? expandOtel(written, ctx.env) : parent?.otel;
      if (!otel?.enabled || otel.endpoint === undefined) return {};
      return this.#setUp(ctx, otel, await loadSdk());
    } catch (e) {
      // Tracing must never fail a run.
      ctx.log(`tracing is off for this run: ${(e as Error).message}`);
      return {};
    }
  }

  #setUp(ctx: RunHookContext, otel: OtelSpec, sdk: Sdk): RunResources {
    const r = ctx.record;
    const { ROOT_CONTEXT, SpanKind, TraceFlags, trace } = sdk.api;
    const pipeline = this.#pipelineFor(otel, sdk, (line) => ctx.log(line));
    if (!pipeline) return {};

    const traceparent = r.traceparent ?? (r.parent ? undefined : this.#opts.inheritedTraceparent);
    const remote = parseTraceparent(traceparent);
    const parentContext = remote
      ? trace.setSpanContext(ROOT_CONTEXT, {
          traceId: remote.traceId,
          spanId: remote.spanId,
          traceFlags: remote.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
          isRemote: true,
        })
      : ROOT_CONTEXT;
    const span = pipeline.tracer.startSpan(
      `run ${r.name}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: timeOf(r.startedAt) ?? new Date(),
        attributes: {
          [Attr.DagName]: r.name,
          [Attr.RunId]: r.dagRunId,
          [Attr.RootRunId]: r.root.dagRunId,
          ...(r.parent ? { [Attr.ParentRunId]: r.parent.dagRunId } : {}),
        },
      },
      parentContext,
    );
    const run: TracedRun = {
      otel,
      sdk,
      pipeline,
      span,
      context: trace.setSpan(parentContext, span),
      steps: new Map(),
    };
    const key = runKey(r);
    this.#runs.set(key, run);
    ctx.log(`tracing to ${pipeline.url}: trace id ${span.spanContext().traceId}`);
    return {
      nodeStarted: (n) => {
        const s = this.#stepSpan(run, n, r);
        return { TRACEPARENT: formatTraceparent(toParent(s)) };
      },
      nodeFinished: (n) => {
        this.#endStep(run, n, r);
        return Promise.resolve();
      },
      runFinished: (final) => {
        this.#endRun(key, run, final);
        return Promise.resolve();
      },
    };
  }

  /** The step's span, started at the node's start time (or `at`) if it is not open yet. */
  #stepSpan(run: TracedRun, n: NodeRecord, r: DagRunRecord, at = new Date()): Span {
    const open = run.steps.get(n.step.name);
    if (open) return open;
    const handler = HANDLER_RECORD_KEYS.some((k) => r[k] === n);
    const { SpanKind } = run.sdk.api;
    const span = run.pipeline.tracer.startSpan(
      `step ${n.step.name}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: timeOf(n.startedAt) ?? timeOf(n.finishedAt) ?? at,
        attributes: {
          [Attr.DagName]: r.name,
          [Attr.RunId]: r.dagRunId,
          [Attr.StepName]: n.step.name,
          [Attr.StepHandler]: handler,
        },
      },
      run.context,
    );
    run.steps.set(n.step.name, span);
    return span;
  }

  #endStep(run: TracedRun, n: NodeRecord, r: DagRunRecord): void {
    // A node skipped or cancelled before it started (no times) gets a span of zero length.
    const now = new Date();
    const span = this.#stepSpan(run, n, r, now);
    run.steps.delete(n.step.name);
    const { SpanStatusCode } = run.sdk.api;
    span.setAttributes({
      [Attr.StepStatus]: nodeStatusLabel[n.status],
      [Attr.StepStatusCode]: n.status,
      [Attr.StepRetryCount]: n.retryCount,
      ...(n.exitCode !== undefined ? { [Attr.StepExitCode]: n.exitCode } : {}),
    });
    if (n.status === NodeStatus.Failed)
      span.setStatus({ code: SpanStatusCode.ERROR, message: n.error });
    else if (n.status === NodeStatus.Succeeded || n.status === NodeStatus.PartiallySucceeded)
      span.setStatus({ code: SpanStatusCode.OK });
    span.end(timeOf(n.finishedAt) ?? now);
  }

  #endRun(key: string, run: TracedRun, r: DagRunRecord): void {
    const end = timeOf(r.finishedAt) ?? new Date();
    for (const s of run.steps.values()) s.end(end);
    run.steps.clear();
    const { SpanStatusCode } = run.sdk.api;
    run.span.setAttributes({
      [Attr.RunStatus]: runStatusLabel[r.status],
      [Attr.RunStatusCode]: r.status,
    });
    if (r.status === RunStatus.Failed)
      run.span.setStatus({ code: SpanStatusCode.ERROR, message: r.error || 'run failed' });
    else if (r.status === RunStatus.Succeeded || r.status === RunStatus.PartiallySucceeded)
      run.span.setStatus({ code: SpanStatusCode.OK });
    run.span.end(end);
    this.#runs.delete(key);
  }

  #pipelineFor(otel: OtelSpec, sdk: Sdk, log: (line: string) => void): ExportPipeline | undefined {
    const key = pipelineKey(otel);
    const known = this.#pipelines.get(key);
    if (known) return known;
    const made = sdk.createPipeline(otel, {
      serviceVersion: this.#opts.serviceVersion,
      warn: this.#opts.warn,
      exporterFor: this.#opts.exporterFor ?? sdk.otlpProtoExporter,
      batchDelayMs: this.#opts.batchDelayMs ?? 1000,
    });
    if ('problem' in made) {
      log(`tracing is off for this run: ${made.problem}`);
      if (!this.#reported.has(key)) {
        this.#reported.add(key);
        this.#opts.warn(made.problem);
      }
      return undefined;
    }
    this.#pipelines.set(key, made);
    return made;
  }

  /** Sends every finished span now; waits at most each collector's `otel.timeout`. */
  async forceFlush(): Promise<void> {
    await Promise.all(
      [...this.#pipelines.values()].map((p) =>
        bounded(p.provider.forceFlush(), p.timeoutMs).catch(() => undefined),
      ),
    );
  }

  /**
   * Flushes and closes every exporter (at process exit); waits at most each collector's
   * `otel.timeout`, then gives up on what was not sent.
   */
  async shutdown(): Promise<void> {
    const all = [...this.#pipelines.values()];
    this.#pipelines.clear();
    await Promise.all(
      all.map((p) => bounded(p.provider.shutdown(), p.timeoutMs).catch(() => undefined)),
    );
  }
}

/**
 * `${VAR}` in the endpoint, headers and resource values, from the run's environment (DAG `env`,
 * dotenv, params, and the system variables steps receive), so a key need not be in the file.
 */
const expandOtel = (o: OtelSpec, env: Readonly<Record<string, string>>): OtelSpec => {
  const x = (v: string): string => expandVarsSync(v, [env]);
  const map = (m: Readonly<Record<string, string>>): Record<string, string> =>
    Object.fromEntries(Object.entries(m).map(([k, v]) => [k, x(v)]));
  return {
    ...o,
    ...(o.endpoint !== undefined ? { endpoint: x(o.endpoint) } : {}),
    headers: map(o.headers),
    resource: map(o.resource),
  };
};

const toParent = (s: Span): { traceId: string; spanId: string; sampled: boolean } => {
  const c = s.spanContext();
  return {
    traceId: c.traceId,
    spanId: c.spanId,
    sampled: (c.traceFlags & 1) === 1, // W3C flag bit 0: sampled
  };
};

/** `p`, or a resolution after `ms` (the timer does not keep the process alive). */
const bounded = (p: Promise<void>, ms: number): Promise<void> =>
  new Promise<void>((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    t.unref();
    p.then(
      () => {
        clearTimeout(t);
        resolve();
      },
      (e: unknown) => {
        clearTimeout(t);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
