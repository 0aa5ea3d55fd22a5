import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { callApi, untilFinal } from '../support/start-all.js';
import { openBrowser, startServer, type BrowserSession, type Server } from './harness.js';

// DAG files users already have (issue 16): `~` in paths, DAGs with no steps, handler keys in
// any case. A real `trellis start-all` whose HOME is a temp dir, and a real browser.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const DAGS: Record<string, string> = {
  tilde: `env:
  - SOMEENV: ~/work
dotenv: ~/x.env
steps:
  - name: literal
    dir: ~/work
    command: pwd
  - name: from-dag-env
    dir: $SOMEENV
    command: pwd
  - name: from-system-env
    dir: \${PROJECT_DIR}
    command: pwd
  - name: script-path
    script: ~/bin/hello.sh
  - name: from-dotenv
    command: echo "dotenv says $FROM_DOTENV"
`,
  defaults: `description: shared defaults, no steps of its own
env:
  - TEAM: data
`,
  'any-case-handlers': `steps:
  - echo work
handlerOn:
  Exit:
    command: echo exit handler ran
`,
};

let server: Server;
let b: BrowserSession;
let base: string;

beforeAll(async () => {
  [server, b] = await Promise.all([
    startServer(DAGS, '', 0, { env: { PROJECT_DIR: '~/proj' } }),
    openBrowser(),
  ]);
  base = `${server.url}/api/v2`;
  // the server's HOME is server.home
  mkdirSync(join(server.home, 'work'));
  mkdirSync(join(server.home, 'proj'));
  mkdirSync(join(server.home, 'bin'));
  writeFileSync(join(server.home, 'bin', 'hello.sh'), '#!/bin/sh\necho hello from home\n', {
    mode: 0o755,
  });
  writeFileSync(join(server.home, 'x.env'), 'FROM_DOTENV=yes\n');
});

afterAll(async () => {
  await b?.close();
  await server?.stop();
});

const call = (method: string, path: string, body?: unknown) => callApi(base, method, path, body);
const start = async (dag: string): Promise<string> => {
  const r = await call('POST', `/dags/${dag}/start`, {});
  expect(r.status).toBe(200);
  return r.body.dagRunId as string;
};
const stepLog = async (dag: string, id: string, step: string): Promise<unknown> =>
  (await call('GET', `/dag-runs/${dag}/${id}/steps/${step}/log`)).body.content;

describe('DAG files users already have, run by trellis start-all', () => {
  it('expands ~ in dir (written, from a DAG env and a system env value), script and dotenv', async () => {
    const id = await start('tilde');
    const run = await untilFinal(base, 'tilde', id);
    const nodes = run.nodes as { step: { name: string }; status: number; error?: string }[];
    expect(nodes.map((n) => [n.step.name, n.status, n.error ?? ''])).toEqual([
      ['literal', 4, ''],
      ['from-dag-env', 4, ''],
      ['from-system-env', 4, ''],
      ['script-path', 4, ''],
      ['from-dotenv', 4, ''],
    ]);
    expect(await stepLog('tilde', id, 'literal')).toBe(join(server.home, 'work'));
    expect(await stepLog('tilde', id, 'from-dag-env')).toBe(join(server.home, 'work'));
    expect(await stepLog('tilde', id, 'from-system-env')).toBe(join(server.home, 'proj'));
    expect(await stepLog('tilde', id, 'script-path')).toBe('hello from home');
    expect(await stepLog('tilde', id, 'from-dotenv')).toBe('dotenv says yes');
  });

  it('validates a DAG with no steps, runs it to success at once, and serves its run', async () => {
    const spec = 'description: shared defaults\nenv:\n  - TEAM: data\n';
    const validated = await call('POST', '/dags/validate', { spec });
    expect(validated.status).toBe(200);
    expect(validated.body).toMatchObject({ valid: true });
    expect(validated.body.errors ?? []).toEqual([]);

    const id = await start('defaults');
    const run = await untilFinal(base, 'defaults', id);
    expect(run).toMatchObject({ status: 4, statusLabel: 'finished', nodes: [] });
    expect(run.finishedAt).not.toBe('');
    const history = await call('GET', '/dags/defaults/dag-runs');
    expect(history.status).toBe(200);
    expect(history.body.gridData ?? []).toEqual([]);
    expect((history.body.dagRuns as { dagRunId: string }[]).map((r) => r.dagRunId)).toEqual([id]);
    const list = await call('GET', `/dag-runs?name=defaults`);
    expect(list.status).toBe(200);
    expect((list.body.dagRuns as { dagRunId: string }[]).map((r) => r.dagRunId)).toEqual([id]);

    // the run page says so instead of breaking
    const { page } = b;
    await page.goto(`${server.url}/runs/defaults/${id}`);
    await page.locator('.page-head .badge[data-status="finished"]').waitFor();
    expect(await page.getByText('This run has no steps.').count()).toBe(2); // steps, timeline
    expect(await page.getByText('This DAG has no steps.').count()).toBe(1); // graph
    await page.goto(`${server.url}/dags/defaults`);
    await page.getByText('This DAG has no steps.').waitFor();
    await b.shot('user-dag-files-no-steps');
    expect(b.problems).toEqual([]);
  });

  it('runs a handler written with a capitalised key (Exit:)', async () => {
    const id = await start('any-case-handlers');
    const run = await untilFinal(base, 'any-case-handlers', id);
    expect(run).toMatchObject({ status: 4, onExit: { status: 4, step: { name: 'onExit' } } });
    expect(await stepLog('any-case-handlers', id, 'onExit')).toBe('exit handler ran');
  });
});
