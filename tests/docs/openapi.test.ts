import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { renderApiDocument } from '@trellis/api';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

describe('docs/openapi.json', () => {
  it('is the document the route schemas generate (run `pnpm gen:openapi` after changing a route)', () => {
    const version = (
      JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }
    ).version;
    expect(readFileSync(join(root, 'docs', 'openapi.json'), 'utf8')).toBe(
      renderApiDocument(version),
    );
  });

  it('is OpenAPI 3.0.0 and documents every path of the spec', () => {
    const doc = JSON.parse(readFileSync(join(root, 'docs', 'openapi.json'), 'utf8')) as {
      openapi: string;
      paths: Record<string, unknown>;
    };
    expect(doc.openapi).toBe('3.0.0');
    for (const path of [
      '/api/v2/health',
      '/api/v2/metrics',
      '/api/v2/dags',
      '/api/v2/dags/search',
      '/api/v2/dags/tags',
      '/api/v2/dags/validate',
      '/api/v2/dags/{fileName}',
      '/api/v2/dags/{fileName}/spec',
      '/api/v2/dags/{fileName}/rename',
      '/api/v2/dags/{fileName}/start',
      '/api/v2/dags/{fileName}/suspend',
      '/api/v2/dags/{fileName}/stop-all',
      '/api/v2/dags/{fileName}/dag-runs',
      '/api/v2/dags/{fileName}/dag-runs/{dagRunId}',
      '/api/v2/dag-runs',
      '/api/v2/dag-runs/{name}',
      '/api/v2/dag-runs/{name}/{dagRunId}',
      '/api/v2/dag-runs/{name}/{dagRunId}/stop',
      '/api/v2/dag-runs/{name}/{dagRunId}/retry',
      '/api/v2/dag-runs/{name}/{dagRunId}/dequeue',
      '/api/v2/dag-runs/{name}/{dagRunId}/log',
      '/api/v2/dag-runs/{name}/{dagRunId}/steps/{stepName}/log',
      '/api/v2/dag-runs/{name}/{dagRunId}/steps/{stepName}/status',
      '/api/v2/dag-runs/{name}/{dagRunId}/children/{childDAGRunId}',
      '/api/v2/dag-runs/{name}/{dagRunId}/children/{childDAGRunId}/log',
      '/api/v2/dag-runs/{name}/{dagRunId}/children/{childDAGRunId}/steps/{stepName}/log',
      '/api/v2/dag-runs/{name}/{dagRunId}/children/{childDAGRunId}/steps/{stepName}/status',
      '/api/v2/queues',
      '/api/v2/workers',
    ]) {
      expect(doc.paths, path).toHaveProperty([path]);
    }
  });
});
