import { z } from 'zod';
import type { Route } from '../http/define-routes.js';
import { ErrorBody } from '@trellis/contract';
import type {
  OpenApiDocument,
  OperationObject,
  ParameterObject,
  ResponseObject,
  SchemaObject,
} from './openapi-document.js';
import { toOpenApiSchema } from './zod-to-openapi.js';

/** Options of {@link buildOpenApi}. */
export interface BuildOpenApiOptions {
  /** The service version (`info.version`). */
  readonly version: string;
  /** `server.basePath`; when set, the document names it in `servers`. @default `''` */
  readonly basePath?: string;
}

/** Where every documented path starts (spec: Versioning). */
export const API_PREFIX = '/api/v2';

/** An Express path (`/dags/:fileName`) as an OpenAPI path (`/dags/{fileName}`). */
export const toOpenApiPath = (expressPath: string): string =>
  expressPath.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');

const pathParamNames = (expressPath: string): string[] =>
  [...expressPath.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1] ?? '');

/** `get` + `/dags/:fileName/spec` -> `getDagsFileNameSpec`. */
const operationIdOf = (method: string, expressPath: string): string =>
  method +
  expressPath
    .split(/[^A-Za-z0-9]+/)
    .filter((w) => w !== '')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');

const ref = (name: string): { $ref: string } => ({ $ref: `#/components/responses/${name}` });

/** The JSON object schema's properties and required names, or nothing for other shapes. */
const objectFields = (
  json: SchemaObject,
): { props: Record<string, SchemaObject>; required: string[] } => {
  const props = (json.properties ?? {}) as Record<string, SchemaObject>;
  const required = Array.isArray(json.required) ? (json.required as string[]) : [];
  return { props, required };
};

/**
 * The documented success status of a route: a route definition may carry `successStatus`
 * (201 for a creation, 204 for a deletion); otherwise 200.
 */
const successStatusOf = (def: object): number => {
  const declared = (def as { successStatus?: unknown }).successStatus;
  return typeof declared === 'number' ? declared : 200;
};

/** The parts of a route definition the document reads (none depends on the routes' deps). */
type DocumentedDef = Pick<
  Route<unknown>['def'],
  'params' | 'query' | 'body' | 'headers' | 'response' | 'permission' | 'summary' | 'eventStream'
>;

/**
 * Builds the OpenAPI 3.0.0 document of the given route tables from the same zod schemas the
 * routes validate with (spec: Versioning, rule 4): path and query parameters and the JSON body
 * from `params`, `query` and `body` (as input), the success body from `response` (as output; a
 * plain string schema means `text/plain`), every error as `ErrorBody` (`4XX`, `5XX`, and 401/403
 * for routes that need credentials), and HTTP Basic and Bearer security schemes. Paths are
 * `/api/v2/...` with `{param}` placeholders.
 */
export const buildOpenApi = <D>(
  tables: readonly (readonly Route<D>[])[],
  options: BuildOpenApiOptions,
): OpenApiDocument => {
  const schemas: Record<string, SchemaObject> = {
    ErrorBody: toOpenApiSchema(ErrorBody, 'output', 'ErrorBody', {}),
  };
  const paths: Record<string, Record<string, OperationObject>> = {};
  const usedIds = new Set<string>();

  for (const { method, path, def } of tables.flat()) {
    let operationId = operationIdOf(method, path);
    for (let n = 2; usedIds.has(operationId); n++)
      operationId = `${operationIdOf(method, path)}${n}`;
    usedIds.add(operationId);
    const operation = operationOf(def, path, operationId, schemas);
    const key = `${API_PREFIX}${toOpenApiPath(path)}`;
    paths[key] = { ...paths[key], [method]: operation };
  }

  return {
    openapi: '3.0.0',
    info: {
      title: 'Trellis API',
      version: options.version,
      description:
        'Trellis REST API v2. Error bodies are {code, message, details?}; timestamps are ISO 8601 ' +
        'UTC or "". Most endpoints accept remoteNode to address a configured remote node.',
    },
    ...(options.basePath ? { servers: [{ url: options.basePath }] } : {}),
    paths,
    components: componentsOf(schemas),
    security: [{ basicAuth: [] }, { bearerAuth: [] }],
  };
};

/**
 * One route's operation. Schemas it names are added to `schemas`, in the order params, query,
 * response, body.
 */
const operationOf = (
  def: DocumentedDef,
  path: string,
  operationId: string,
  schemas: Record<string, SchemaObject>,
): OperationObject => {
  const parameters = parametersOf(def, path, operationId, schemas);
  const status = successStatusOf(def);
  const success = successResponseOf(def, status, operationId, schemas);
  const isPublic = def.permission === 'public';
  return {
    operationId,
    ...(def.summary !== undefined ? { summary: def.summary } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(def.body
      ? {
          requestBody: {
            // The router parses an absent body as `{}` (define-routes).
            required: !def.body.safeParse({}).success,
            content: {
              'application/json': {
                schema: toOpenApiSchema(def.body, 'input', `${operationId}Body`, schemas),
              },
            },
          },
        }
      : {}),
    responses: {
      [String(status)]: success,
      ...(isPublic ? {} : { '401': ref('Unauthorized'), '403': ref('Forbidden') }),
      '4XX': ref('Error'),
      '5XX': ref('Error'),
    },
    ...(isPublic ? { security: [] } : {}),
  };
};

/** The path parameters (every `:name` of the path), then the query parameters. */
const parametersOf = (
  def: DocumentedDef,
  path: string,
  operationId: string,
  schemas: Record<string, SchemaObject>,
): ParameterObject[] => {
  const parameters: ParameterObject[] = [];
  const params = def.params
    ? objectFields(toOpenApiSchema(def.params, 'input', `${operationId}Params`, schemas))
    : undefined;
  for (const name of pathParamNames(path)) {
    const schema = params?.props[name] ?? { type: 'string' };
    parameters.push({ name, in: 'path', required: true, schema });
  }
  const named: [z.ZodType | undefined, 'query' | 'header', string][] = [
    [def.query, 'query', 'Query'],
    [def.headers, 'header', 'Headers'],
  ];
  for (const [schemaOf, where, suffix] of named) {
    if (!schemaOf) continue;
    const { props, required } = objectFields(
      toOpenApiSchema(schemaOf, 'input', `${operationId}${suffix}`, schemas),
    );
    for (const [name, schema] of Object.entries(props)) {
      const description = typeof schema.description === 'string' ? schema.description : undefined;
      parameters.push({
        name,
        in: where,
        required: required.includes(name),
        schema,
        ...(description !== undefined ? { description } : {}),
      });
    }
  }
  return parameters;
};

/** The success response: none for 204 or no schema, text for a string schema, else JSON. */
const successResponseOf = (
  def: DocumentedDef,
  status: number,
  operationId: string,
  schemas: Record<string, SchemaObject>,
): ResponseObject => {
  if (def.eventStream) {
    const data = toOpenApiSchema(def.eventStream, 'output', `${operationId}Event`, schemas);
    return {
      description:
        'A Server-Sent Events stream (docs/api.md, "Events"); each event\'s data is JSON of this shape',
      content: { 'text/event-stream': { schema: data } },
    };
  }
  if (status === 204 || !def.response)
    return { description: status === 204 ? 'No content' : 'Success' };
  if (def.response instanceof z.ZodString)
    return {
      description: 'Success',
      content: { 'text/plain': { schema: { type: 'string' } } },
    };
  const schema = toOpenApiSchema(def.response, 'output', `${operationId}Response`, schemas);
  return { description: 'Success', content: { 'application/json': { schema } } };
};

/** `components`: the named schemas, the shared error responses and the security schemes. */
const componentsOf = (schemas: Record<string, SchemaObject>): OpenApiDocument['components'] => {
  const errorContent = {
    'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } },
  };
  return {
    schemas,
    responses: {
      Error: { description: 'An error: {code, message, details?}', content: errorContent },
      Unauthorized: {
        description: 'Missing or invalid credentials (code unauthorized)',
        content: errorContent,
        headers: {
          'WWW-Authenticate': {
            description: 'The challenge: Basic realm="trellis" or Bearer realm="trellis"',
            schema: { type: 'string' },
          },
        },
      },
      Forbidden: {
        description:
          'The caller lacks the permission; the message names the denied action (code forbidden)',
        content: errorContent,
      },
    },
    securitySchemes: {
      basicAuth: { type: 'http', scheme: 'basic' },
      bearerAuth: { type: 'http', scheme: 'bearer' },
    },
  };
};

/** `value` with the keys of every object sorted, so the JSON text is stable. */
const sortKeys = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
  );
};

/**
 * The document of {@link buildOpenApi} as JSON text with sorted keys, two-space indentation and
 * a final newline: the form checked in as `docs/openapi.json`, stable across runs.
 */
export const renderOpenApiJson = <D>(
  tables: readonly (readonly Route<D>[])[],
  version: string,
): string => `${JSON.stringify(sortKeys(buildOpenApi(tables, { version })), null, 2)}\n`;
