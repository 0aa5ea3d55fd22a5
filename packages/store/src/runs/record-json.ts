import type { DagRunRecord } from '@trellis/spec';

/** A node's JSON text (and its bytes) and the values it was made from (its own keys, in order). */
interface NodeJson {
  readonly keys: readonly string[];
  readonly values: readonly unknown[];
  readonly json: string;
  readonly bytes: Uint8Array;
  /** The node parsed back from `json` (made when a copy first needs it), for every copy. */
  parsed: unknown;
}

/** The JSON of nodes saved before, by node object. */
const cache = new WeakMap<object, NodeJson>();

const COMMA = Buffer.from(',');

const made = (json: string, keys: readonly string[] = [], values: readonly unknown[] = []) => ({
  keys,
  values,
  json,
  bytes: Buffer.from(json),
  parsed: undefined as unknown,
});

/** The node as its text holds it, parsed once per text: the copies of later saves share it. */
const parsedOf = (n: NodeJson): unknown => (n.parsed ??= JSON.parse(n.json) as unknown);

/**
 * The JSON text of a record's node, reused from the last save while none of the node's own
 * values changed (compared by identity). A long run's record holds every node, and a save per
 * step would otherwise stringify all of them again: about 150 KB for 200 steps, the largest
 * JavaScript cost of a step after its process start. Relies on the engine's way of changing a
 * node: fields are assigned, nested values (the step, outputs, children) replaced by new objects,
 * never edited in place (packages/engine/src/run/step/step-policies.ts, child-run.ts).
 */
const nodeJson = (node: unknown): NodeJson => {
  if (typeof node !== 'object' || node === null || Array.isArray(node))
    return made(JSON.stringify(node) ?? 'null');
  const hit = cache.get(node);
  if (hit !== undefined && isUnchanged(node as Record<string, unknown>, hit)) return hit;
  const keys = Object.keys(node);
  const values = keys.map((k) => (node as Record<string, unknown>)[k]);
  const fresh = made(JSON.stringify(node) ?? 'null', keys, values);
  cache.set(node, fresh);
  return fresh;
};

/**
 * True while `node` has the keys, in order, and values (by identity) its cached text was made
 * from. Walks the keys with `for...in`, which allocates nothing, instead of two arrays per node
 * and save (`Object.keys` and its values), most of a save's CPU for a long run's record. A node
 * is a plain object, whose `for...in` keys are its own ones in `Object.keys` order (inherited
 * enumerable keys, if any, only make it count as changed: its text is made again).
 */
const isUnchanged = (node: Record<string, unknown>, hit: NodeJson): boolean => {
  let i = 0;
  for (const k in node) {
    if (hit.keys[i] !== k || hit.values[i] !== node[k]) return false;
    i++;
  }
  return i === hit.keys.length;
};

/** A record's JSON text in parts, as a save writes it. */
export interface RecordText {
  /**
   * The text's bytes in order: the record's own fields, then each node's text (reused from the
   * last save while the node is unchanged), written as they are (`writev`). No text of the whole
   * record is made: a fresh buffer of 150 KB and more costs a page fault per 4 KiB on the
   * 2-core machine, several times the copying itself.
   */
  readonly parts: readonly Uint8Array[];
  /** The record's `revision` when the text was made: the one `parts` hold. */
  readonly revision: number;
  /**
   * A copy of the record as the text holds it (for `onRecordSaved`), parsed part by part. A node
   * unchanged since an earlier save is the object that save's copy holds (parsed once, not at
   * every save: a long run's record is mostly such nodes): copies are for reading only.
   */
  copy(): DagRunRecord;
}

/**
 * The record as compact JSON with `revision` as the first key (what `JSON.stringify` of
 * `{ revision, ...record }` gives), its nodes' text reused from earlier saves where unchanged.
 */
export const recordText = (r: DagRunRecord): RecordText => {
  // `head` ends with `"nodes":[` and `tail` starts with `]`: together they are the record
  // without its nodes
  let head = `{"revision":${JSON.stringify(r.revision)}`;
  let tail = '';
  let nodes: NodeJson[] | undefined;
  for (const [k, v] of Object.entries(r)) {
    if (k === 'revision') continue;
    if (k === 'nodes' && Array.isArray(v) && nodes === undefined) {
      nodes = v.map(nodeJson);
      head += ',"nodes":[';
      tail = ']';
      continue;
    }
    const json = JSON.stringify(v) as string | undefined;
    if (json === undefined) continue;
    if (nodes === undefined) head += `,${JSON.stringify(k)}:${json}`;
    else tail += `,${JSON.stringify(k)}:${json}`;
  }
  tail += '}';
  const parts: Uint8Array[] = [Buffer.from(head)];
  nodes?.forEach((n, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(n.bytes);
  });
  parts.push(Buffer.from(tail));
  return {
    parts,
    revision: r.revision,
    copy: () => {
      const record = JSON.parse(head + tail) as DagRunRecord;
      if (nodes !== undefined) record.nodes = nodes.map((n) => parsedOf(n) as never);
      return record;
    },
  };
};
