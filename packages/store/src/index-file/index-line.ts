import type { RunSummary } from '../runs/run-summary.js';

/** One line of `index.jsonl`: a run's latest summary, or the removal of a run. */
export type IndexLine =
  | { readonly kind: 'put'; readonly key: string; readonly summary: RunSummary }
  | { readonly kind: 'del'; readonly key: string };

const PUT = '{"put":';
const DEL = '{"del":';

/** The index key of a summary: `dagRunId`, or `rootId/childId` for a child run. */
export const keyOfSummary = (s: RunSummary): string =>
  s.parent === undefined ? s.dagRunId : `${s.root.dagRunId}/${s.dagRunId}`;

/** The text of a line, newline included. Every line starts with `{"put":` or `{"del":`. */
export const encodeIndexLine = (line: IndexLine): string =>
  line.kind === 'put'
    ? `${JSON.stringify({ put: line.summary })}\n`
    : `${JSON.stringify({ del: line.key })}\n`;

const decodeJson = (text: string): IndexLine | undefined => {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const o = v as { put?: unknown; del?: unknown };
  if (typeof o.del === 'string') return { kind: 'del', key: o.del };
  const s = o.put as RunSummary | undefined;
  if (
    typeof s === 'object' &&
    s !== null &&
    typeof s.dagRunId === 'string' &&
    typeof s.name === 'string' &&
    typeof s.status === 'number' &&
    typeof s.createdAt === 'string' &&
    typeof s.revision === 'number' &&
    typeof s.root === 'object' &&
    s.root !== null
  )
    return { kind: 'put', key: keyOfSummary(s), summary: s };
  return undefined;
};

/**
 * Parses one complete line (without its newline). A line that starts with the torn fragment of a
 * crashed append (the crash left no newline, so the next append continued the same line) is
 * salvaged from its last `{"put":`/`{"del":`. Undefined when nothing can be read.
 */
export const decodeIndexLine = (text: string): IndexLine | undefined => {
  const line = text.endsWith('\r') ? text.slice(0, -1) : text;
  if (line === '') return undefined;
  const whole = decodeJson(line);
  if (whole !== undefined) return whole;
  const start = Math.max(line.lastIndexOf(PUT), line.lastIndexOf(DEL));
  return start > 0 ? decodeJson(line.slice(start)) : undefined;
};
