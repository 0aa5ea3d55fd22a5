import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineRoutes } from '../http/define-routes.js';
import { systemRoutes } from '../routes/system.routes.js';
import { DagName, FileName, queryInt } from '@trellis/contract';
import { buildOpenApi, renderOpenApiJson, toOpenApiPath } from './build-openapi.js';
import type { OpenApiDocument } from './openapi-document.js';

interface TreeNode {
  name: string;
  children: TreeNode[];
}
const TreeNode: z.ZodType<TreeNode> = z.object({
  name: z.string(),
  get children() {
    return z.array(TreeNode);
  },
});

/** Routes exercising every part the document is built from. */
const sampleRoutes = defineRoutes<unknown>((r) => [
  r.get('/dags/:fileName/dag-runs/:dagRunId', {
    params: z.object({ fileName: FileName, dagRunId: z.string() }),
    query: z.object({
      perPage: queryInt(1, 1000).optional(),
      order: z.enum(['asc', 'desc']).default('asc'),
      remoteNode: z.string().optional(),
    }),
    response: z.object({ dagRun: z.object({ name: DagName, status: z.number().int() }) }),
    summary: 'One run of a DAG',
    handler: () => Promise.resolve({ status: 200 }),
  }),
  r.post('/dags', {
    permission: 'dags:write',
    body: z.object({ name: DagName, spec: z.string().optional() }),
    handler: () => Promise.resolve({ status: 201 }),
  }),
  r.post('/dags/:fileName/stop', {
    permission: 'runs:write',
    body: z.object({ reason: z.string().optional() }),
    handler: () => Promise.resolve({ status: 200 }),
  }),
  r.get('/tree', { response: TreeNode, handler: () => Promise.resolve({ status: 200 }) }),
]);

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace']);

/** Every key and value in a JSON tree, with its path. */
const walk = (
  node: unknown,
  at: string,
  visit: (key: string, value: unknown, at: string) => void,
): void => {
  if (Array.isArray(node)) node.forEach((n, i) => walk(n, `${at}[${i}]`, visit));
  else if (typeof node === 'object' && node !== null) {
    for (const [k, v] of Object.entries(node)) {
      visit(k, v, `${at}.${k}`);
      walk(v, `${at}.${k}`, visit);
    }
  }
};

const resolvePointer = (doc: unknown, ref: string): unknown =>
  ref
    .slice(2)
    .split('/')
    .reduce<unknown>(
      (node, seg) =>
        typeof node === 'object' && node !== null
          ? (node as Record<string, unknown>)[seg]
          : undefined,
      doc,
    );

/** Structural problems of an OpenAPI 3.0.0 document (what a validator would report first). */
const problemsOf = (doc: OpenApiDocument): string[] => {
  const problems: string[] = [];
  if (doc.openapi !== '3.0.0') problems.push('openapi is not 3.0.0');
  if (!doc.info.title || !doc.info.version) problems.push('info needs title and version');
  const ids = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths)) {
    if (!path.startsWith('/api/v2/') || path.includes(':')) problems.push(`path ${path}`);
    const placeholders = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
    for (const [method, op] of Object.entries(item)) {
      if (!HTTP_METHODS.has(method)) problems.push(`${path}: method ${method}`);
      if (ids.has(op.operationId)) problems.push(`duplicate operationId ${op.operationId}`);
      ids.add(op.operationId);
      const responses = Object.entries(op.responses);
      if (responses.length === 0) problems.push(`${method} ${path}: no responses`);
      for (const [code, r] of responses) {
        if (!/^([1-5]\d\d|[1-5]XX|default)$/.test(code))
          problems.push(`${method} ${path}: status ${code}`);
        if (!('$ref' in r) && typeof r.description !== 'string')
          problems.push(`${method} ${path} ${code}: description`);
      }
      for (const name of placeholders) {
        const p = op.parameters?.find((x) => x.in === 'path' && x.name === name);
        if (!p?.required)
          problems.push(`${method} ${path}: path parameter ${name} not declared as required`);
      }
    }
  }
  walk(doc, '#', (key, value, at) => {
    if (['$schema', '$defs', 'definitions', 'const'].includes(key))
      problems.push(`${at}: ${key} is not OpenAPI 3.0`);
    if (key === 'type' && Array.isArray(value))
      problems.push(`${at}: type must be one string in OpenAPI 3.0`);
    if (key === '$ref' && (typeof value !== 'string' || resolvePointer(doc, value) === undefined)) {
      problems.push(`${at}: $ref ${String(value)} does not resolve`);
    }
  });
  return problems;
};

const build = () => buildOpenApi([systemRoutes(false), sampleRoutes], { version: '1.2.3' });

describe('buildOpenApi', () => {
  it('produces a structurally valid OpenAPI 3.0.0 document for the system routes', () => {
    const doc = buildOpenApi([systemRoutes(false)], { version: '1.2.3' });
    expect(problemsOf(doc)).toEqual([]);
    expect(Object.keys(doc.paths)).toEqual(['/api/v2/health', '/api/v2/metrics']);
  });

  it('produces a structurally valid document for routes with params, query, body and a recursive response', () => {
    expect(problemsOf(build())).toEqual([]);
  });

  it('turns :params into {params} under /api/v2', () => {
    expect(toOpenApiPath('/dags/:fileName/dag-runs/:dagRunId')).toBe(
      '/dags/{fileName}/dag-runs/{dagRunId}',
    );
    expect(Object.keys(build().paths)).toContain('/api/v2/dags/{fileName}/dag-runs/{dagRunId}');
  });

  it('documents path and query parameters from the input side of their schemas', () => {
    const op = build().paths['/api/v2/dags/{fileName}/dag-runs/{dagRunId}']?.get;
    expect(op?.operationId).toBe('getDagsFileNameDagRunsDagRunId');
    expect(op?.summary).toBe('One run of a DAG');
    expect(op?.parameters).toEqual([
      {
        name: 'fileName',
        in: 'path',
        required: true,
        schema: { type: 'string', maxLength: 250, pattern: '^[a-zA-Z0-9_-]+$' },
      },
      { name: 'dagRunId', in: 'path', required: true, schema: { type: 'string' } },
      {
        name: 'perPage',
        in: 'query',
        required: false,
        schema: { type: 'integer', minimum: 1, maximum: 1000 },
      },
      {
        name: 'order',
        in: 'query',
        required: false,
        schema: { type: 'string', enum: ['asc', 'desc'], default: 'asc' },
      },
      { name: 'remoteNode', in: 'query', required: false, schema: { type: 'string' } },
    ]);
  });

  it('documents the JSON body, required only when an empty body would fail', () => {
    const doc = build();
    const create = doc.paths['/api/v2/dags']?.post?.requestBody;
    expect(create?.required).toBe(true);
    expect(create?.content['application/json']?.schema).toMatchObject({
      type: 'object',
      required: ['name'],
      properties: { name: { type: 'string', maxLength: 40 } },
    });
    expect(doc.paths['/api/v2/dags/{fileName}/stop']?.post?.requestBody?.required).toBe(false);
  });

  it('documents success bodies, text/plain for metrics, and ErrorBody for errors', () => {
    const doc = build();
    const health = doc.paths['/api/v2/health']?.get;
    expect(health?.responses['200']).toMatchObject({
      content: {
        'application/json': {
          schema: { type: 'object', required: ['status', 'version', 'uptime', 'timestamp'] },
        },
      },
    });
    expect(doc.paths['/api/v2/metrics']?.get?.responses['200']).toEqual({
      description: 'Success',
      content: { 'text/plain': { schema: { type: 'string' } } },
    });
    expect(health?.responses['5XX']).toEqual({ $ref: '#/components/responses/Error' });
    expect(doc.components.schemas.ErrorBody).toMatchObject({ required: ['code', 'message'] });
  });

  it('marks public routes with empty security and lists 401 and 403 for the others', () => {
    const doc = build();
    expect(doc.security).toEqual([{ basicAuth: [] }, { bearerAuth: [] }]);
    expect(doc.components.securitySchemes).toEqual({
      basicAuth: { type: 'http', scheme: 'basic' },
      bearerAuth: { type: 'http', scheme: 'bearer' },
    });
    const health = doc.paths['/api/v2/health']?.get;
    expect(health?.security).toEqual([]);
    expect(Object.keys(health?.responses ?? {})).toEqual(['200', '4XX', '5XX']);
    const create = doc.paths['/api/v2/dags']?.post;
    expect(create?.security).toBeUndefined();
    expect(Object.keys(create?.responses ?? {})).toEqual(['200', '401', '403', '4XX', '5XX']);
    const privateMetrics = buildOpenApi([systemRoutes(true)], { version: '1' }).paths[
      '/api/v2/metrics'
    ]?.get;
    expect(privateMetrics?.security).toBeUndefined();
  });

  it('moves a recursive schema into components and points at it', () => {
    const doc = build();
    expect(doc.paths['/api/v2/tree']?.get?.responses['200']).toEqual({
      description: 'Success',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/getTreeResponse' } } },
    });
    expect(doc.components.schemas.getTreeResponse).toMatchObject({
      properties: {
        children: { type: 'array', items: { $ref: '#/components/schemas/getTreeResponse' } },
      },
    });
  });

  it('documents a successStatus a route definition carries, and none for 204', () => {
    const [route] = defineRoutes<unknown>((r) => [
      r.delete('/dags/:fileName', {
        permission: 'dags:write',
        handler: () => Promise.resolve({ status: 204 }),
      }),
    ]);
    const deleted = { ...route!, def: { ...route!.def, successStatus: 204 } };
    const doc = buildOpenApi([[deleted]], { version: '1' });
    expect(doc.paths['/api/v2/dags/{fileName}']?.delete?.responses['204']).toEqual({
      description: 'No content',
    });
  });

  it('names a basePath in servers', () => {
    expect(buildOpenApi([], { version: '1', basePath: '/trellis' }).servers).toEqual([
      { url: '/trellis' },
    ]);
    expect(buildOpenApi([], { version: '1' }).servers).toBeUndefined();
  });
});

describe('renderOpenApiJson', () => {
  it('is stable: sorted keys, two-space indentation, a final newline', () => {
    const text = renderOpenApiJson([systemRoutes(false), sampleRoutes], '1.2.3');
    expect(renderOpenApiJson([systemRoutes(false), sampleRoutes], '1.2.3')).toBe(text);
    expect(text.endsWith('}\n')).toBe(true);
    expect(text.startsWith('{\n  "components": {')).toBe(true);
    expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(build())));
  });
});
