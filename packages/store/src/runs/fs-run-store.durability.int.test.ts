import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RunStatus, systemClock } from '@trellis/core';
import { makeRecord } from '@trellis/testkit';
import { fd } from '../fs/fd.js';
import { FsRunStore } from './fs-run-store.js';

const snapshot = { dag: {}, localDags: [] } as never;

/** Every rename and directory sync the store does, in order, as `rename <to>` / `syncDir <dir>`. */
const journalOf = (): string[] => {
  const journal: string[] = [];
  const rename = fd.rename;
  const syncDir = fd.syncDir;
  vi.spyOn(fd, 'rename').mockImplementation(async (from, to) => {
    await rename(from, to);
    journal.push(`rename ${String(to)}`);
  });
  vi.spyOn(fd, 'syncDir').mockImplementation(async (dir) => {
    await syncDir(dir);
    journal.push(`syncDir ${dir}`);
  });
  return journal;
};

describe('durability of the renames that publish queued and final records (issue 15)', () => {
  let dir: string;
  let store: FsRunStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'trellis-durable-'));
    store = new FsRunStore({
      dataDir: join(dir, 'data'),
      logDir: join(dir, 'logs'),
      clock: systemClock,
    });
  });
  afterEach(() => {
    vi.restoreAllMocks();
    rmSync(dir, { recursive: true, force: true });
  });

  it('syncs the DAG folder after the rename that publishes a queued run', async () => {
    const journal = journalOf();
    await store.createRun(makeRecord({ status: RunStatus.Queued }), snapshot);
    const runDir = join(dir, 'data', 'runs', 'etl', 'run-0001');
    // (the DAG's new index file follows, published the same way)
    expect(journal.slice(0, 2)).toEqual([`rename ${runDir}`, `syncDir ${dirname(runDir)}`]);
  });

  it('syncs the run folder after the rename of a final record, and not for a running one', async () => {
    const r = makeRecord({ status: RunStatus.Running });
    await store.createRun(r, snapshot);
    const journal = journalOf();
    await store.saveRun({ ...r, revision: 1 });
    const status = join(dir, 'data', 'runs', 'etl', 'run-0001', 'status.json');
    expect(journal).toEqual([`rename ${status}`]);
    await store.saveRun({ ...r, status: RunStatus.Succeeded, revision: 2 });
    expect(journal).toEqual([`rename ${status}`, `rename ${status}`, `syncDir ${dirname(status)}`]);
  });

  it('syncs the run folder after the swap of saveRunIf (a queued run dequeued)', async () => {
    const r = makeRecord({ status: RunStatus.Queued });
    await store.createRun(r, snapshot);
    const journal = journalOf();
    expect(await store.saveRunIf({ ...r, status: RunStatus.Cancelled, revision: 1 }, 0)).toBe(true);
    const status = join(dir, 'data', 'runs', 'etl', 'run-0001', 'status.json');
    expect(journal).toEqual([`rename ${status}`, `syncDir ${dirname(status)}`]);
  });

  it('writes the record of saveRunIf while its lock is taken, and removes it when the swap loses', async () => {
    const r = makeRecord({ status: RunStatus.Queued });
    await store.createRun(r, snapshot);
    const runDir = join(dir, 'data', 'runs', 'etl', 'run-0001');
    // another process is deciding right now (a fresh lock): this swap loses
    writeFileSync(join(runDir, '.swap.lock'), '');
    const opened: string[] = [];
    const open = fd.open;
    vi.spyOn(fd, 'open').mockImplementation((path, flags) => {
      opened.push(basename(path));
      return open(path, flags);
    });
    expect(await store.saveRunIf({ ...r, status: RunStatus.Running, revision: 1 }, 0)).toBe(false);
    // the content was not left for the lock: it went to a temporary file at once
    expect(opened.filter((n) => n.startsWith('.tmp-status.json'))).toHaveLength(1);
    // removed in the background: the lost swap answered without waiting for it
    await expect.poll(() => readdirSync(runDir).filter((n) => n.startsWith('.tmp-'))).toEqual([]);
    expect((await store.getRun(r)).revision).toBe(0);
  });

  it('lists a queued or final record whose folder sync failed, and tells the failure after', async () => {
    const r = makeRecord({ status: RunStatus.Running });
    await store.createRun(r, snapshot);
    const eio = Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' });
    const sync = vi.spyOn(fd, 'syncDir');
    // as another process lists them: from the index on disk
    const listed = async (): Promise<Record<string, number>> => {
      const other = new FsRunStore({
        dataDir: join(dir, 'data'),
        logDir: join(dir, 'logs'),
        clock: systemClock,
      });
      const runs = await other.listRuns({ name: 'etl' });
      return Object.fromEntries(runs.map((s) => [s.dagRunId, s.status]));
    };
    sync.mockRejectedValueOnce(eio);
    await expect(store.saveRun({ ...r, status: RunStatus.Failed, revision: 1 })).rejects.toBe(eio);
    expect(await listed()).toEqual({ 'run-0001': RunStatus.Failed });
    sync.mockRejectedValueOnce(eio);
    const done = { ...r, status: RunStatus.Succeeded, revision: 2 };
    await expect(store.saveRunIf(done, 1)).rejects.toBe(eio);
    expect(await listed()).toEqual({ 'run-0001': RunStatus.Succeeded });
    sync.mockRejectedValueOnce(eio);
    const queued = makeRecord({ dagRunId: 'run-0002', status: RunStatus.Queued });
    await expect(store.createRun(queued, snapshot)).rejects.toBe(eio);
    expect(await listed()).toEqual({
      'run-0001': RunStatus.Succeeded,
      'run-0002': RunStatus.Queued,
    });
    // sent again, the save lands again and is synced this time
    await expect(
      store.saveRun({ ...r, status: RunStatus.Failed, revision: 3 }),
    ).resolves.toBeUndefined();
    expect((await store.getRun(r)).revision).toBe(3);
  });

  it("fsyncs every log the run's recorder wrote to, and their folder, when it is closed", async () => {
    const r = makeRecord({ status: RunStatus.Running });
    await store.createRun(r, snapshot);
    const recorder = store.recorderFor(r);
    recorder.log('a line');
    const step = await recorder.openStepLogs('a');
    step.stdout.write('out\n');
    await step.close();
    const synced: string[] = [];
    const syncFile = fd.syncFile;
    vi.spyOn(fd, 'syncFile').mockImplementation(async (p) => {
      await syncFile(p);
      synced.push(p);
    });
    const journal = journalOf();
    await recorder.close();
    // stderr got no bytes: only its name needs to be durable (the folder's sync)
    expect(synced.sort()).toEqual([step.stdoutPath, recorder.runLogPath].sort());
    expect(journal).toEqual([`syncDir ${dirname(recorder.runLogPath)}`]);
    synced.length = 0;
    await recorder.close(); // nothing written since: nothing to sync
    expect(synced).toEqual([]);
  });

  it('counts a record write the file system refused as disk trouble, never a refusal such as not_found', async () => {
    const missing = makeRecord({ dagRunId: 'never-created', status: RunStatus.Succeeded });
    await expect(store.saveRun(missing)).rejects.toMatchObject({ code: 'not_found' });
    expect(store.writeErrors.counts().record).toBe(0);
    const r = makeRecord({ status: RunStatus.Running });
    await store.createRun(r, snapshot);
    const eio = Object.assign(new Error('EIO: i/o error, rename'), { code: 'EIO' });
    vi.spyOn(fd, 'rename').mockRejectedValue(eio);
    await expect(store.saveRun({ ...r, revision: 1 })).rejects.toBe(eio);
    expect(store.writeErrors.counts().record).toBe(1);
    expect(store.writeErrors.problem()).toContain('EIO');
  });
});
