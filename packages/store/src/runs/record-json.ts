import type { DagRunRecord } from '@trellis/spec';

/** A node's JSON text and the values it was made from (its own keys, in order). */
interface NodeJson {
  readonly keys: readonly string[];
  readonly values: readonly unknown[];
  readonly json: string;
}

/** The JSON of nodes saved before, by node object. */
const cache = new WeakMap<object, NodeJson>();

/**
 * The JSON text of a record's node, reused from the last save while none of the node's own
 * values changed (compared by identity). A long run's record holds every node, and a save per
 * step would otherwise stringify all of them again: about 150 KB for 200 steps, the largest
 * JavaScript cost of a step after its process start. Relies on the engine's way of changing a
 * node: fields are assigned, nested values (the step, outputs, children) replaced by new objects,
 * never edited in place (packages/engine/src/run/step/step-policies.ts, child-run.ts).
 */
const nodeJson = (node: unknown): string => {
  if (typeof node !== 'object' || node === null || Array.isArray(node))
    return JSON.stringify(node) ?? 'null';
  const keys = Object.keys(node);
  const values = keys.map((k) => (node as Record<string, unknown>)[k]);
  const hit = cache.get(node);
  if (
    hit !== undefined &&
    hit.keys.length === keys.length &&
    keys.every((k, i) => hit.keys[i] === k && hit.values[i] === values[i])
  )
    return hit.json;
  const json = JSON.stringify(node) ?? 'null';
  cache.set(node, { keys, values, json });
  return json;
};

/**
 * The record as compact JSON with `revision` as the first key (what `JSON.stringify` of
 * `{ revision, ...record }` gives), its nodes' text reused from earlier saves where unchanged.
 */
export const recordJson = (r: DagRunRecord): string => {
  const parts = [`{"revision":${JSON.stringify(r.revision)}`];
  for (const [k, v] of Object.entries(r)) {
    if (k === 'revision') continue;
    const json =
      k === 'nodes' && Array.isArray(v)
        ? `[${v.map(nodeJson).join(',')}]`
        : (JSON.stringify(v) as string | undefined);
    if (json !== undefined) parts.push(`${JSON.stringify(k)}:${json}`);
  }
  return `${parts.join(',')}}`;
};
