import { ANY_QUEUE, type Labels } from '@trellis/spec';

export { ANY_QUEUE, canonicalSelector, type Labels } from '@trellis/spec';

/**
 * The selector a canonical queue name stands for (inverse of {@link canonicalSelector}).
 * Label names and values are written by DAG authors; `,` and `=` inside them would be ambiguous,
 * so a pair is split at its first `=`.
 */
export const selectorOfQueue = (queue: string): Record<string, string> => {
  if (queue === ANY_QUEUE || queue === '') return {};
  const out: Record<string, string> = {};
  for (const pair of queue.split(',')) {
    const at = pair.indexOf('=');
    if (at > 0) out[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return out;
};

/**
 * True when a worker with `labels` may run a task with `selector` (spec: workerSelector): every
 * selector label is present on the worker with an exactly equal value (case-sensitive); an empty
 * selector matches every worker.
 */
export const matchesSelector = (labels: Labels, selector: Labels): boolean =>
  Object.entries(selector).every(([k, v]) => Object.hasOwn(labels, k) && labels[k] === v);

/**
 * Parses `k=v,k2=v2` (the worker's `--labels` flag). Returns the labels, or a sentence naming the
 * bad part and the fix.
 */
export const parseLabels = (text: string): Record<string, string> | string => {
  const out: Record<string, string> = {};
  const trimmed = text.trim();
  if (trimmed === '') return out;
  for (const raw of trimmed.split(',')) {
    const part = raw.trim();
    const at = part.indexOf('=');
    if (at <= 0) {
      return `invalid label ${JSON.stringify(part)}: use name=value pairs separated by commas, e.g. gpu=true,region=eu`;
    }
    const name = part.slice(0, at).trim();
    out[name] = part.slice(at + 1).trim();
  }
  return out;
};
