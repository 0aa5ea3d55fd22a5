import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunStatus, systemClock } from '@trellis/core';
import { STORE_SRC, spawnTs } from '../../test/support/spawn-ts.js';
import { FsRunStore } from './fs-run-store.js';

/**
 * A separate process that creates a running run owned by itself, saves it several times, writes
 * its logs, says `ready` and then waits to be killed.
 */
const childScript = (dataDir: string, logDir: string): string => `
import { FsRunStore } from ${JSON.stringify(join(STORE_SRC, 'runs/fs-run-store.ts'))};
import { currentOwner } from ${JSON.stringify(join(STORE_SRC, 'owner/process-owner.ts'))};
const clock = { now: () => new Date(), sleep: () => Promise.resolve() };
const store = new FsRunStore({ dataDir: ${JSON.stringify(dataDir)}, logDir: ${JSON.stringify(logDir)}, clock });
const record = {
  name: 'etl', dagRunId: 'crash-1', root: { name: 'etl', dagRunId: 'crash-1' },
  status: 0, createdAt: new Date().toISOString(), queuedAt: '', startedAt: '', finishedAt: '',
  log: store.runLogPath({ name: 'etl', dagRunId: 'crash-1' }), params: [], nodes: [],
  preconditions: [], error: '', queue: 'etl', revision: 0,
};
await store.createRun(record, { dag: { name: 'etl' }, localDags: [] });
const recorder = store.recorderFor(record);
record.status = 1;
record.startedAt = new Date().toISOString();
record.owner = currentOwner();
for (let i = 1; i <= 20; i++) {
  record.revision = i;
  record.error = 'step ' + i;
  void recorder.save(record); // fired without awaiting, as an engine may
}
recorder.log('run started');
await recorder.save({ ...record, revision: 21 });
process.stdout.write('ready\\n');
setInterval(() => undefined, 60_000);
`;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-crash-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('crash safety', () => {
  it('keeps the record of a run whose process was killed with SIGKILL, and finds it orphaned', async () => {
    const dataDir = join(dir, 'data');
    const logDir = join(dir, 'logs');
    const child = spawnTs(dir, 'runner', childScript(dataDir, logDir));
    let out = '';
    child.stdout!.setEncoding('utf8');
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (d: string) => {
        out += d;
        if (out.includes('ready')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`child exited early with ${code}: ${out}`)));
      child.stderr?.resume();
    });
    child.kill('SIGKILL');
    await once(child, 'exit');

    const store = new FsRunStore({ dataDir, logDir, clock: systemClock });
    const [orphan, ...others] = await store.findOrphanedRuns();
    expect(others).toEqual([]);
    expect(orphan).toMatchObject({
      dagRunId: 'crash-1',
      status: RunStatus.Running,
      revision: 21,
      error: 'step 20',
      owner: { pid: child.pid },
    });
    // The next process marks it failed; the store takes the save and nothing is orphaned any more.
    await store.saveRun({
      ...orphan!,
      status: RunStatus.Failed,
      revision: 22,
      error: 'owner died',
    });
    expect(await store.findOrphanedRuns()).toEqual([]);
    expect((await store.listRuns({ status: RunStatus.Failed })).map((r) => r.dagRunId)).toEqual([
      'crash-1',
    ]);
  }, 20_000);
});
