import { z } from 'zod';
import type { SchemaObject } from './openapi-document.js';

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A deep copy of `node` with every local `$ref` passed through `rewrite`. */
const rewriteRefs = (node: unknown, rewrite: (ref: string) => string): unknown => {
  if (Array.isArray(node)) return node.map((n) => rewriteRefs(n, rewrite));
  if (!isObject(node)) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    out[key] =
      key === '$ref' && typeof value === 'string' && value.startsWith('#')
        ? rewrite(value)
        : rewriteRefs(value, rewrite);
  }
  return out;
};

const hasLocalRef = (node: unknown): boolean => {
  if (Array.isArray(node)) return node.some(hasLocalRef);
  if (!isObject(node)) return false;
  return Object.entries(node).some(([key, value]) =>
    key === '$ref' && typeof value === 'string' ? value.startsWith('#') : hasLocalRef(value),
  );
};

/**
 * A zod schema as an OpenAPI 3.0 schema object, via zod 4's `z.toJSONSchema` with target
 * `openapi-3.0`. `io: 'input'` describes what a request may send (before defaults, coercion and
 * transforms), `'output'` what a response holds. Parts JSON Schema cannot express (transforms,
 * dates) become `{}`.
 *
 * A recursive schema refers to itself (`#`) or to its own definitions, which mean nothing inside
 * a larger document: such a schema is moved into `components` under `name` (its definitions
 * under `name_<def>`) with the references rewritten, and a `$ref` to it is returned.
 */
export const toOpenApiSchema = (
  schema: z.ZodType,
  io: 'input' | 'output',
  name: string,
  components: Record<string, SchemaObject>,
): SchemaObject => {
  const {
    $schema: _dialect,
    definitions,
    $defs,
    ...root
  } = z.toJSONSchema(schema, {
    target: 'openapi-3.0',
    io,
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  const defs = { ...(isObject(definitions) ? definitions : {}), ...(isObject($defs) ? $defs : {}) };
  if (Object.keys(defs).length === 0 && !hasLocalRef(root)) return root;

  const target = (ref: string): string => {
    if (ref === '#') return `#/components/schemas/${name}`;
    const def = /^#\/(?:definitions|\$defs)\/(.+)$/.exec(ref)?.[1];
    return def === undefined ? ref : `#/components/schemas/${name}_${def}`;
  };
  components[name] = rewriteRefs(root, target) as SchemaObject;
  for (const [key, def] of Object.entries(defs)) {
    components[`${name}_${key}`] = rewriteRefs(def, target) as SchemaObject;
  }
  return { $ref: `#/components/schemas/${name}` };
};
