import {
  CORE_SCHEMA,
  EVENT_ID,
  YAMLException,
  constructFromEvents,
  getScalarValue,
  mergeTag,
  parseEvents,
} from 'js-yaml';
import type { Problem } from './problem.js';
import { LineIndex, SourceMap, type PositionNode } from './source-map.js';

/** One parsed YAML document with the positions of its nodes. */
export interface YamlDocument {
  /** The document's value (`null` for an empty document). */
  readonly value: unknown;
  readonly sourceMap: SourceMap;
}

/** The documents of one YAML text, or its syntax problems. */
export interface ParsedYaml {
  readonly documents: readonly YamlDocument[];
  /** Syntax errors, with line and column. When present, `documents` is empty. */
  readonly problems: readonly Problem[];
}

/** YAML 1.2 core schema plus merge keys (`<<: *defaults`), which DAG authors use for reuse. */
const SCHEMA = CORE_SCHEMA.withTags(mergeTag);

/**
 * Parses a (possibly multi-document) YAML text. Never throws: a syntax error becomes one problem
 * naming its line and column.
 */
export const parseYaml = (text: string, fileName?: string): ParsedYaml => {
  const lines = new LineIndex(text);
  try {
    const events = parseEvents(text, fileName === undefined ? {} : { filename: fileName });
    // A recursive structure cannot be a DAG, and would send later code into endless loops.
    const recursion = recursiveAlias(text, events, lines);
    if (recursion) return { documents: [], problems: [recursion] };
    const values = constructFromEvents(events, { source: text, schema: SCHEMA });
    const starts = documentStarts(events);
    const documents = values.map((value, i) => ({
      value: value ?? null,
      sourceMap: new SourceMap(lines, () => positionTree(text, events, starts[i] ?? events.length)),
    }));
    return { documents, problems: [] };
  } catch (e) {
    return { documents: [], problems: [yamlSyntaxProblem(e, text)] };
  }
};

/** The key written at `offset` (where js-yaml marks a duplicated key), unquoted. */
const keyAt = (text: string, offset: number): string | undefined => {
  const line = text.slice(offset, offset + 200).split(/\r\n?|\n/)[0] ?? '';
  const m = /^(?:"([^"]*)"|'([^']*)'|(.+?))\s*:(?:\s|$)/.exec(line);
  return m ? (m[1] ?? m[2] ?? m[3]) : undefined;
};

/** The parser's reason, plus the likely cause and fix where its wording alone is obscure. */
const explain = (reason: string, text: string, offset: number | undefined): string => {
  if (reason === 'duplicated mapping key') {
    const key = offset === undefined ? undefined : keyAt(text, offset);
    return `duplicated mapping key${key ? ` ${JSON.stringify(key)}` : ''}: each key may appear once per mapping`;
  }
  if (reason === 'deficient indentation')
    // js-yaml raises this only inside quoted text or a [ ] / { } collection that runs onto a
    // less indented line: almost always a quote or bracket left open on an earlier line.
    return 'deficient indentation: quoted text or a [ ] / { } collection runs onto this line; close the quote or bracket where it starts, or indent this line further';
  return reason;
};

const yamlSyntaxProblem = (e: unknown, text: string): Problem => {
  if (e instanceof YAMLException) {
    const base = {
      path: '',
      message: `YAML syntax error: ${explain(e.reason, text, e.mark?.position)}`,
    };
    return e.mark ? { ...base, line: e.mark.line + 1, column: e.mark.column + 1 } : base;
  }
  return { path: '', message: `YAML syntax error: ${e instanceof Error ? e.message : String(e)}` };
};

type Events = ReturnType<typeof parseEvents>;

/**
 * The first alias that points at a node still open around it (`steps: &s [*s]`), which would
 * make the value contain itself. One pass over the events; anchors are read only where present.
 */
const recursiveAlias = (text: string, events: Events, lines: LineIndex): Problem | undefined => {
  const open: (string | undefined)[] = [];
  for (const ev of events) {
    if (ev.type === EVENT_ID.DOCUMENT) open.length = 0;
    else if (ev.type === EVENT_ID.POP) open.pop();
    else if (ev.type === EVENT_ID.MAPPING || ev.type === EVENT_ID.SEQUENCE)
      open.push(ev.anchorStart >= 0 ? text.slice(ev.anchorStart, ev.anchorEnd) : undefined);
    else if (ev.type === EVENT_ID.ALIAS) {
      const name = text.slice(ev.anchorStart, ev.anchorEnd);
      if (!open.includes(name)) continue;
      const { line, column } = lines.position(ev.anchorStart);
      return {
        path: '',
        message: `YAML error: alias *${name} is used inside the node it refers to, which would make an endless structure: repeat the values instead`,
        line,
        column: column - 1,
      };
    }
  }
  return undefined;
};

/** Index of each document's DOCUMENT event. */
const documentStarts = (events: Events): number[] => {
  const out: number[] = [];
  events.forEach((ev, i) => {
    if (ev.type === EVENT_ID.DOCUMENT) out.push(i);
  });
  return out;
};

type Frame =
  | {
      kind: 'map';
      node: PositionNode & { keys: Map<string, PositionNode> };
      key: string | undefined;
      expectKey: boolean;
    }
  | { kind: 'seq'; node: PositionNode & { items: PositionNode[] } };

/**
 * Builds the position tree of the document whose DOCUMENT event is at `from`, by walking its
 * events once. Mapping entries are placed at their key, so a problem names the key's line.
 */
const positionTree = (text: string, events: Events, from: number): PositionNode | undefined => {
  let root: PositionNode | undefined;
  const stack: Frame[] = [];

  /** Attaches a node that starts now; returns 'key' for a mapping key (handled by the caller). */
  const attach = (offset: number, make: (offset: number) => PositionNode): PositionNode | 'key' => {
    const top = stack[stack.length - 1];
    if (!top) return (root = make(offset));
    if (top.kind === 'seq') {
      const n = make(offset);
      top.node.items.push(n);
      return n;
    }
    if (top.expectKey) {
      top.expectKey = false;
      return 'key';
    }
    top.expectKey = true;
    const keyed = top.key === undefined ? undefined : top.node.keys.get(top.key);
    // The entry keeps the key's offset; the value's own children hang below it.
    const n = make(keyed?.offset ?? offset);
    if (top.key !== undefined) top.node.keys.set(top.key, n);
    return n;
  };

  for (let i = from + 1; i < events.length; i++) {
    const ev = events[i];
    if (!ev || ev.type === EVENT_ID.DOCUMENT) break;
    switch (ev.type) {
      case EVENT_ID.POP:
        if (stack.pop() === undefined) return root;
        break;
      case EVENT_ID.SCALAR: {
        const r = attach(ev.valueStart, (offset) => ({ offset }));
        const top = stack[stack.length - 1];
        if (r === 'key' && top?.kind === 'map') {
          top.key = getScalarValue(text, ev);
          top.node.keys.set(top.key, { offset: ev.valueStart });
        }
        break;
      }
      case EVENT_ID.ALIAS:
        if (attach(ev.anchorStart, (offset) => ({ offset })) === 'key') {
          const top = stack[stack.length - 1];
          if (top?.kind === 'map') top.key = undefined;
        }
        break;
      case EVENT_ID.MAPPING:
      case EVENT_ID.SEQUENCE: {
        const start = ev.anchorStart >= 0 ? ev.anchorStart : ev.start;
        const isMap = ev.type === EVENT_ID.MAPPING;
        const make = (offset: number): PositionNode =>
          isMap ? { offset, keys: new Map<string, PositionNode>() } : { offset, items: [] };
        let r = attach(start, make);
        if (r === 'key') {
          // A complex (non-scalar) key: track its structure, but it names no entry.
          const top = stack[stack.length - 1];
          if (top?.kind === 'map') top.key = undefined;
          r = make(start);
        }
        stack.push(
          isMap
            ? {
                kind: 'map',
                node: r as Frame['node'] & { keys: Map<string, PositionNode> },
                key: undefined,
                expectKey: true,
              }
            : { kind: 'seq', node: r as PositionNode & { items: PositionNode[] } },
        );
        break;
      }
    }
  }
  return root;
};
