import { describe, expect, it } from 'vitest';
import type { Authenticator } from '@trellis/api';
import { dagYaml, useDagRoutes } from '../support/dag-routes-fixture.js';
import { expectError } from '../support/expect-error.js';

/** What a caller who may only read is refused and allowed. */
const { api, write, files, useAuth } = useDagRoutes();

describe('DAG endpoint permissions', () => {
  /** A caller who may only read. */
  const viewer: Authenticator = {
    authenticate: () => ({ ok: true, principal: { name: 'vera', role: 'viewer' } }),
    can: (_p, permission) => permission === 'read',
  };

  it('answers 403 forbidden naming the action for every change, and lets reads and validate through', async () => {
    useAuth(viewer);
    write('a.yaml', dagYaml());
    expectError(
      await api().post('/api/v2/dags').send({ name: 'b' }),
      403,
      'forbidden',
      /editing DAGs/,
    );
    expectError(await api().delete('/api/v2/dags/a'), 403, 'forbidden', /editing DAGs/);
    expectError(
      await api().put('/api/v2/dags/a/spec').send({ spec: dagYaml() }),
      403,
      'forbidden',
      /editing DAGs/,
    );
    expectError(
      await api().post('/api/v2/dags/a/rename').send({ newFileName: 'b' }),
      403,
      'forbidden',
    );
    expectError(
      await api().post('/api/v2/dags/a/suspend').send({ suspend: true }),
      403,
      'forbidden',
      /running DAGs/,
    );
    expect(files()).toEqual(['a.yaml']);
    for (const path of [
      '/api/v2/dags',
      '/api/v2/dags/a',
      '/api/v2/dags/a/spec',
      '/api/v2/dags/tags',
      '/api/v2/dags/search?q=s',
    ])
      expect((await api().get(path)).status, path).toBe(200);
    expect((await api().post('/api/v2/dags/validate').send({ spec: dagYaml() })).status).toBe(200);
  });
});
