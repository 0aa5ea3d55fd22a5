import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunStatus } from '@trellis/core';
import type { CoordinatorSide } from '../../test/support/fleet.js';
import { useWorkerFleet } from '../../test/support/worker-fleet-fixture.js';

/**
 * A DAG's own `logDir` (issue 15, item 2) through a real worker process: a private redis-server,
 * the coordinator over a file store, and `trellis worker` (the built binary).
 */
const fleet = useWorkerFleet();
let side: CoordinatorSide;
let own: string;
beforeAll(() => {
  side = fleet.side;
  own = mkdtempSync(join(tmpdir(), 'trellis-own-logs-'));
});
afterAll(() => rmSync(own, { recursive: true, force: true }));

describe("a DAG's logDir on workers", { timeout: 60_000 }, () => {
  it('puts the logs of a run executed on a worker under the DAG logDir, where the log reads find them', async () => {
    await fleet.worker('w1', { pool: 'logs' });
    await fleet.joined('w1');
    const id = fleet.newId();
    const yaml = [
      'name: own-logs',
      `logDir: ${own}`,
      'workerSelector:',
      '  pool: logs',
      'steps:',
      '  - {name: a, command: "echo shipped to the own folder"}',
      '',
    ].join('\n');
    await side.submit(yaml, id);
    const final = await side.final(id);
    expect(final.status).toBe(RunStatus.Succeeded);
    const runDir = join(own, 'own-logs', id);
    expect(final.log).toBe(join(runDir, 'run.log'));
    expect(final.nodes[0]?.stdout).toBe(join(runDir, 'a.out'));
    // the coordinator wrote the shipped chunks there, not under its own log folder
    expect((await side.store.readLog(final.log)).content).toContain('run finished');
    expect((await side.store.readLog(join(runDir, 'a.out'))).content).toBe(
      'shipped to the own folder',
    );
    expect(existsSync(join(side.home, 'logs', 'own-logs', id))).toBe(false);
  });
});
