import { defineRoutes } from '../http/define-routes.js';
import type { OpenApiDocument } from './openapi-document.js';

/** `GET /openapi.json` (public): the API's OpenAPI 3.0.0 document (spec: Versioning, rule 4). */
export const openApiRoutes = <D>(document: () => OpenApiDocument) =>
  defineRoutes<D>((r) => [
    r.get('/openapi.json', {
      permission: 'public',
      summary: 'The OpenAPI 3.0.0 document of this API',
      handler: () => Promise.resolve({ status: 200, body: document() }),
    }),
  ]);
