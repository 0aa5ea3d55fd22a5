import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunStatus, systemClock } from '@trellis/core';
import { makeRecord } from '@trellis/testkit';
import { FsRunStore } from './fs-run-store.js';

const snapshot = { dag: {}, localDags: [] } as never;

describe("a DAG's own logDir (issue 15, item 2)", () => {
  let dir: string;
  let store: FsRunStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'trellis-logdir-'));
    store = new FsRunStore({
      dataDir: join(dir, 'data'),
      logDir: join(dir, 'logs'),
      clock: systemClock,
      userHome: join(dir, 'home'),
    });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const ref = { name: 'etl', dagRunId: 'run-0001' };

  it('puts the run log under the DAG logDir: absolute as written, ~ as the home folder, relative under the store log folder', () => {
    expect(store.runLogPath(ref, join(dir, 'own'))).toBe(join(dir, 'own/etl/run-0001/run.log'));
    expect(store.runLogPath(ref, '~/trellis-logs')).toBe(
      join(dir, 'home/trellis-logs/etl/run-0001/run.log'),
    );
    expect(store.runLogPath(ref, 'team-a')).toBe(join(dir, 'logs/team-a/etl/run-0001/run.log'));
    expect(store.runLogPath(ref)).toBe(join(dir, 'logs/etl/run-0001/run.log'));
  });

  it('records, reads and deletes the logs where the record says, not under the store log folder', async () => {
    const log = store.runLogPath(ref, join(dir, 'own'));
    const r = makeRecord({ status: RunStatus.Running, log });
    await store.createRun(r, snapshot);
    const recorder = store.recorderFor(r);
    expect(recorder.runLogPath).toBe(log);
    recorder.log('hello from the own log folder');
    const step = await recorder.openStepLogs('a');
    expect(step.stdoutPath).toBe(join(dir, 'own/etl/run-0001/a.out'));
    step.stdout.write('step output\n');
    await step.close();
    await recorder.close();

    expect((await store.readLog(log)).content).toContain('hello from the own log folder');
    expect((await store.readLog(step.stdoutPath)).content).toBe('step output');
    expect(existsSync(join(dir, 'logs/etl/run-0001/run.log'))).toBe(false);

    await store.saveRun({ ...r, status: RunStatus.Succeeded, revision: 1 });
    await store.deleteRun(ref);
    expect(existsSync(join(dir, 'own/etl/run-0001'))).toBe(false);
  });
});
