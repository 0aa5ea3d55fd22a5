import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';

/**
 * Wraps an exporter so a failing collector is reported, not fatal: the first failure of a streak
 * is logged once (with the reason), the recovery is logged with the number of spans dropped in
 * between. Spans that could not be sent are dropped; runs never wait for the collector.
 */
export class ReportingExporter implements SpanExporter {
  #failing = false;
  #dropped = 0;

  constructor(
    private readonly inner: SpanExporter,
    private readonly target: string,
    private readonly warn: (message: string) => void,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      if (result.code === ExportResultCode.FAILED) {
        this.#dropped += spans.length;
        if (!this.#failing) {
          this.#failing = true;
          const why = result.error?.message ?? 'unknown error';
          this.warn(
            `trace export to ${this.target} failed (${why}); spans are dropped until the collector answers, runs are not affected`,
          );
        }
      } else if (this.#failing) {
        this.#failing = false;
        this.warn(
          `trace export to ${this.target} works again; ${this.#dropped} span(s) were dropped`,
        );
        this.#dropped = 0;
      }
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}
