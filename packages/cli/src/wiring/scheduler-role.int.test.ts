import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { AppError, RunStatus } from '@trellis/core';
import { FakeClock } from '@trellis/testkit';
import { dagDefinitionsOf, makeRuntime } from './runtime.js';
import { startSchedulerRole } from './scheduler-role.js';

const homes: string[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
});

it('runs the retention pass over every DAG a minute after taking the scheduler lease', async () => {
  const home = mkdtempSync(join(tmpdir(), 'trellis-role-'));
  homes.push(home);
  mkdirSync(join(home, 'dags'));
  writeFileSync(join(home, 'dags', 'old.yaml'), 'histRetentionDays: 30\nsteps:\n  - "true"\n');
  const lines: string[] = [];
  const io = {
    out: (l: string) => lines.push(l),
    err: (l: string) => lines.push(l),
    env: { SVC_HOME: home, PATH: '/usr/bin:/bin' },
    cwd: home,
  };
  const rt = await makeRuntime(io, {});
  const at = '2020-01-02T03:04:05.000Z'; // years before the store's (real) clock
  const ref = { name: 'old', dagRunId: 'ancient' };
  await rt.store.createRun(
    {
      ...ref,
      root: ref,
      status: RunStatus.Succeeded,
      createdAt: at,
      queuedAt: '',
      startedAt: at,
      finishedAt: at,
      log: rt.store.runLogPath(ref),
      params: [],
      nodes: [],
      preconditions: [],
      error: '',
      queue: 'old',
      revision: 0,
    },
    { dag: { name: 'old', steps: [], histRetentionDays: 30 }, localDags: [] },
  );
  const clock = new FakeClock(Date.now());
  const stop = new AbortController();
  const role = await startSchedulerRole(
    rt,
    dagDefinitionsOf(rt, clock),
    clock,
    (l) => lines.push(l),
    stop.signal,
  );
  await expect.poll(() => role.status.running()).toBe(true);
  await clock.advanceBy(59_000);
  expect((await rt.store.getRun(ref)).status).toBe(RunStatus.Succeeded); // not yet
  await clock.advanceBy(1_000);
  await expect
    .poll(() =>
      rt.store.getRun(ref).then(
        () => 'kept',
        (e: unknown) => (AppError.is(e) ? e.code : e),
      ),
    )
    .toBe('not_found');
  // said once the pass over every DAG is over, a moment after this run's deletion
  await expect.poll(() => lines.join('\n')).toMatch(/retention deleted 1 run/);
  stop.abort();
  await role.done;
});
