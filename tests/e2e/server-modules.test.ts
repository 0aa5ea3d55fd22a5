import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { moduleLog } from './support/module-log.js';
import { callApi, startAll } from './support/start-all.js';

/*
 * What a real `trellis start-all` loads once its app is up, with no OIDC sign-in configured (the
 * default): not the OpenID Connect libraries, which load with the first sign-in
 * (packages/api/src/auth/oidc/oidc-client.ts; ~1.2 MB of heap).
 */

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-server-modules-'));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('a trellis start-all process without OIDC', () => {
  it('loads its app, and neither openid-client nor jose', async () => {
    const log = moduleLog(dir);
    const home = join(dir, 'home');
    const server = await startAll({
      PATH: '/usr/local/bin:/usr/bin:/bin',
      HOME: home,
      SVC_HOME: home,
      NODE_OPTIONS: `--import ${log.preload}`,
      ...log.env,
    });
    try {
      // an answer of the app itself (not the early /health): its modules are loaded
      expect((await callApi(`${server.url}/api/v2`, 'GET', '/dags')).status).toBe(200);
    } finally {
      await server.stop();
    }
    const loaded = log.loaded();
    // the hook saw the app's modules: an empty list proves nothing
    expect(loaded).toContain('packages/api/dist/auth/oidc/create-oidc.js');
    expect(loaded.filter((m) => /^node_modules\/(openid-client|jose)\//.test(m))).toEqual([]);
  });
});
