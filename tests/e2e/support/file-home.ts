import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { systemClock } from '@trellis/core';
import type { DagRunRecord, NodeRecord } from '@trellis/spec';
import { FsRunStore, runLogPathIn, stepLogPathsBeside } from '@trellis/store';

/** What `makeFileHome` made, to check a copy against. */
export interface FileHome {
  readonly store: FsRunStore;
  readonly dataDir: string;
  readonly logDir: string;
  readonly runs: number;
  readonly children: number;
  readonly queued: number;
  readonly logs: number;
}

/** Runs created at once. */
const BATCH = 20;

const node = (name: string, out: string, err: string): NodeRecord => ({
  step: { name, command: `echo ${name}` } as NodeRecord['step'],
  stdout: out,
  stderr: err,
  startedAt: '2026-01-02T03:04:06.000Z',
  finishedAt: '2026-01-02T03:04:07.000Z',
  status: 4,
  retryCount: 0,
  doneCount: 1,
  retriedAt: '',
  children: [],
  childrenRepeated: [],
  error: '',
  outputs: {},
  exitCode: 0,
});

const recordOf = (
  logDir: string,
  name: string,
  id: string,
  i: number,
  parent?: { name: string; dagRunId: string },
): DagRunRecord => {
  const log = runLogPathIn(logDir, { name, dagRunId: id });
  const { stdoutPath, stderrPath } = stepLogPathsBeside(log, 'work');
  const queued = parent === undefined && i % 50 === 7;
  const createdAt = new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
  return {
    name,
    dagRunId: id,
    root: parent ?? { name, dagRunId: id },
    ...(parent !== undefined ? { parent } : {}),
    status: queued ? 5 : i % 10 === 3 ? 2 : 4,
    createdAt,
    queuedAt: queued ? createdAt : '',
    startedAt: queued ? '' : createdAt,
    finishedAt: queued ? '' : createdAt,
    log,
    params: [{ name: 'N', value: String(i) }],
    nodes: queued ? [] : [node('work', stdoutPath, stderrPath)],
    preconditions: [],
    error: i % 10 === 3 ? 'step work failed' : '',
    queue: name,
    revision: 3,
  };
};

/** Writes the logs a run's record names: a run log, and the step's stdout and stderr. */
const writeLogs = (r: DagRunRecord, i: number): number => {
  mkdirSync(join(r.log, '..'), { recursive: true });
  writeFileSync(
    r.log,
    `2026-01-02T03:04:05Z run ${r.dagRunId} started\n2026-01-02T03:04:07Z done\n`,
  );
  const n = r.nodes[0];
  if (n === undefined) return 1;
  // every 100th stdout is longer, and its last line has no newline (an unfinished line)
  const lines = i % 100 === 0 ? 2000 : 3;
  writeFileSync(
    n.stdout,
    Array.from({ length: lines }, (_, k) => `out ${i} line ${k + 1}`).join('\n'),
  );
  writeFileSync(n.stderr, i % 10 === 3 ? `error in run ${i}\r\n` : '');
  return 3;
};

/**
 * A file home of `runs` top-level runs of a few DAGs through the file store's API, with logs,
 * every 50th queued (status 5), every 20th with a child run; for `trellis migrate store`.
 */
export const makeFileHome = async (home: string, runs: number): Promise<FileHome> => {
  const dataDir = join(home, 'data');
  const logDir = join(home, 'logs');
  const store = new FsRunStore({ dataDir, logDir, clock: systemClock });
  let children = 0;
  let queued = 0;
  let logs = 0;
  const one = async (i: number): Promise<void> => {
    const name = `dag-${i % 5}`;
    const r = recordOf(logDir, name, `run-${String(i).padStart(5, '0')}`, i);
    await store.createRun(r, { dag: { name, steps: [{ name: 'work' }] }, localDags: [] });
    logs += writeLogs(r, i);
    if (r.status === 5) queued++;
    if (i % 20 === 0) {
      const c = recordOf(logDir, 'child-dag', `child-${i}`, i, { name, dagRunId: r.dagRunId });
      await store.createRun(c, { dag: { name: 'child-dag' }, localDags: [] });
      logs += writeLogs(c, i + 1);
      children++;
    }
  };
  // a few at once: the file store's writes are mostly waiting on the disk
  for (let i = 0; i < runs; i += BATCH)
    await Promise.all(Array.from({ length: Math.min(BATCH, runs - i) }, (_, k) => one(i + k)));
  return { store, dataDir, logDir, runs, children, queued, logs };
};
