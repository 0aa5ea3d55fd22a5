import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { API_ROUTE_TABLES, ROLE_PERMISSIONS, createAuthenticator } from '@trellis/api';
import { loadConfig } from '@trellis/core';
import { apiHarness } from '../support/api-harness.js';

const ROLES = ['admin', 'manager', 'operator', 'viewer'] as const;
// One user per role (password = name), configured as an operator would, through config.yaml.
const configHome = mkdtempSync(join(tmpdir(), 'trellis-auth-'));
writeFileSync(
  join(configHome, 'config.yaml'),
  `auth:\n  mode: basic\n  users:\n${ROLES.map((r) => `    - {name: ${r}, password: ${r}, role: ${r}}`).join('\n')}\n`,
);
const auth = createAuthenticator(
  loadConfig({ env: { SVC_HOME: configHome }, argv: {} }).config.auth,
);

/**
 * Every mutating route of the API, with its declared permission, against every role: a role
 * without the permission gets 403 naming the action; a role with it gets past authorisation (any
 * status but 401/403); without credentials everything but public routes is 401.
 */
describe('authorisation matrix: each role against each mutating endpoint', () => {
  const h = apiHarness([...API_ROUTE_TABLES], { auth });
  afterAll(() => {
    h.cleanup();
    rmSync(configHome, { recursive: true, force: true });
  });
  const mutating = API_ROUTE_TABLES.flat().filter(
    (r) => r.def.permission === 'dags:write' || r.def.permission === 'runs:write',
  );
  const pathOf = (p: string): string =>
    `/api/v2${p.replace(':fileName', 'nodag').replace(':name', 'nodag').replace(':dagRunId', 'r1').replace(':childDAGRunId', 'c1').replace(':stepName', 's1')}`;

  it('covers every mutating route of the spec', () => {
    expect(mutating.length).toBeGreaterThanOrEqual(13); // enqueue joins with the scheduling issue
  });

  for (const route of mutating) {
    for (const role of ROLES) {
      const allowed = ROLE_PERMISSIONS[role].includes(
        route.def.permission as 'dags:write' | 'runs:write',
      );
      it(`${route.method.toUpperCase()} ${route.path} as ${role}: ${allowed ? 'allowed' : '403'}`, async () => {
        const agent = request(h.app);
        const res = await agent[route.method](pathOf(route.path)).auth(role, role).send({});
        if (allowed) expect([401, 403]).not.toContain(res.status);
        else {
          expect(res.status).toBe(403);
          expect(res.body.code).toBe('forbidden');
          expect(res.body.message).toMatch(/is not allowed/);
        }
      });
    }
    it(`${route.method.toUpperCase()} ${route.path} without credentials: 401 with a challenge`, async () => {
      const agent = request(h.app);
      const res = await agent[route.method](pathOf(route.path)).send({});
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Basic realm=/);
    });
  }
});
