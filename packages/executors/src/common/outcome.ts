import type { Writable } from 'node:stream';
import type { ExecContext, ExecutionOutcome } from '@trellis/engine';

/** A failure without an exit code (bad config, unreachable service): data, never an exception. */
export const failed = (error: string, exitCode: number | null = null): ExecutionOutcome => ({
  exitCode,
  signal: null,
  error,
});

/** Writes `text` and resolves once the stream accepted it (backpressure respected). */
export const writeText = (out: Writable, text: string): Promise<void> =>
  new Promise((resolve) => {
    if (text === '' || !out.writable) {
      resolve();
      return;
    }
    out.write(text, () => resolve());
  });

/**
 * Output produced in memory (http body, jq result): written to the step's stdout and, when the
 * engine asked for it, captured up to `captureLimit` bytes like a process's stdout.
 */
export const emitOutput = async (
  ctx: ExecContext,
  text: string,
): Promise<Pick<ExecutionOutcome, 'output' | 'outputExceeded'>> => {
  await writeText(ctx.stdout, text);
  if (ctx.captureLimit === undefined) return {};
  const bytes = Buffer.from(text);
  if (bytes.length <= ctx.captureLimit) return { output: text, outputExceeded: false };
  return {
    output: bytes.subarray(0, ctx.captureLimit).toString('utf8'),
    outputExceeded: true,
  };
};

/** `trellis: <message>` on the step's stderr, the way the shell executor reports its own notes. */
export const note = (ctx: ExecContext, message: string): Promise<void> =>
  writeText(ctx.stderr, `trellis: ${message}\n`);
