import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  callApi,
  startAll,
  untilFinal as untilFinalOf,
  type StartAll,
} from './support/start-all.js';

let home: string;
let server: StartAll;
let base: string;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'trellis-e2e-server-'));
  server = await startAll({ PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, SVC_HOME: home });
  base = `${server.url}/api/v2`;
});

afterAll(async () => {
  await server.stop();
  rmSync(home, { recursive: true, force: true });
});

const call = (method: string, path: string, body?: unknown) => callApi(base, method, path, body);

const untilFinal = (name: string, id: string) => untilFinalOf(base, name, id);

describe('trellis start-all (a real process on a real port)', () => {
  it('answers health', async () => {
    const r = await call('GET', '/health');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'healthy' });
  });

  it('creates a DAG, runs it, and serves its run, nodes, logs and grid', async () => {
    const spec =
      'params: WHO=api\nsteps:\n  - name: greet\n    command: echo "hello ${WHO}"\n  - name: second\n    command: "true"\n';
    expect((await call('POST', '/dags', { name: 'hello', spec })).status).toBe(201);
    const started = await call('POST', '/dags/hello/start', { params: '{"WHO":"e2e"}' });
    expect(started.status).toBe(200);
    const id = started.body.dagRunId as string;
    const run = await untilFinal('hello', id);
    expect(run).toMatchObject({ status: 4, statusLabel: 'finished', params: '{"WHO":"e2e"}' });
    expect((run.nodes as { status: number }[]).map((n) => n.status)).toEqual([4, 4]);
    const log = await call('GET', `/dag-runs/hello/${id}/steps/greet/log`);
    expect(log.body).toMatchObject({ content: 'hello e2e', lineCount: 1 });
    const grid = await call('GET', '/dags/hello/dag-runs');
    expect(grid.body.gridData).toEqual([
      { name: 'greet', history: [4] },
      { name: 'second', history: [4] },
    ]);
    const list = await call('GET', '/dags');
    expect((list.body.dags as { fileName: string }[]).map((d) => d.fileName)).toEqual(['hello']);
  });

  it('stops a long run and retries a failed one', async () => {
    await call('POST', '/dags', {
      name: 'long',
      spec: 'steps:\n  - {name: wait, command: "sleep 60"}\n',
    });
    const long = await call('POST', '/dags/long/start', {});
    const longId = long.body.dagRunId as string;
    // start answers once the run is running on disk, so it can be stopped at once
    const stopped = await call('POST', `/dag-runs/long/${longId}/stop`);
    expect(stopped).toEqual({ status: 200, body: {} });
    expect((await untilFinal('long', longId)).status).toBe(3);

    await call('POST', '/dags', {
      name: 'flaky',
      spec: `steps:\n  - {name: gate, command: "test -f ${join(home, 'ok')}"}\n`,
    });
    const failed = await call('POST', '/dags/flaky/start', {});
    const failedId = failed.body.dagRunId as string;
    expect((await untilFinal('flaky', failedId)).status).toBe(2);
    await import('node:fs').then((fs) => fs.writeFileSync(join(home, 'ok'), ''));
    const retried = await call('POST', `/dag-runs/flaky/${failedId}/retry`, {
      dagRunId: 'retried-1',
    });
    expect(retried).toEqual({ status: 200, body: { dagRunId: 'retried-1' } });
    expect((await untilFinal('flaky', 'retried-1')).status).toBe(4);
  });

  it('shuts down on SIGTERM with exit 0', async () => {
    expect(await server.stop()).toBe(0);
    expect(server.output()).toMatch(/Trellis stopped/);
  });

  it('exits 1 saying so when its port is taken, instead of hanging on with nothing served', async () => {
    const taken = createServer();
    taken.listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const port = (taken.address() as AddressInfo).port;
    const other = mkdtempSync(join(tmpdir(), 'trellis-e2e-server-taken-'));
    try {
      const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: other, SVC_HOME: other };
      // startAll rejects with the exit code and the output once the process exits
      await expect(startAll(env, ['--port', String(port)])).rejects.toThrow(
        new RegExp(`exited with 1:[\\s\\S]*port ${port} on 127.0.0.1 is in use`),
      );
    } finally {
      taken.close();
      rmSync(other, { recursive: true, force: true });
    }
  });
});
