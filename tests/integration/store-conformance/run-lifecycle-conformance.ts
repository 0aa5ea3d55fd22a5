import { describe, expect, it } from 'vitest';
import { AppError, RunStatus } from '@trellis/core';
import type { ConformanceSubject } from './conformance-subject.js';
import { isoPlus, makeChildRecord, makeRecord } from '@trellis/testkit';

const T0 = '2026-01-02T03:04:05.000Z';
const snapshot = { dag: { name: 'etl', steps: [] }, localDags: [] };
const DAY = 86_400_000;

const codeOf = async (p: Promise<unknown>): Promise<string | undefined> =>
  p.then(
    () => undefined,
    (e: unknown) => (AppError.is(e) ? e.code : String(e)),
  );

/** Logs, stop requests and deletion: the other half of the conformance suite. */
export const describeRunLifecycleConformance = (
  label: string,
  subject: () => Promise<ConformanceSubject>,
): void => {
  describe(`${label}: logs`, () => {
    it('keeps timestamped run log lines and appends step logs when a retry opens them again', async () => {
      const { store } = await subject();
      const rec = makeRecord();
      await store.createRun(rec, snapshot);
      const recorder = store.recorderFor(rec);
      recorder.log('started');
      recorder.log('two\nlines');
      for (const text of ['first try\n', 'second try\n']) {
        const logs = await recorder.openStepLogs('build step');
        logs.stdout.write(text);
        logs.stderr.write('warn ');
        await logs.close();
      }
      await recorder.close();
      const run = await store.readLog(recorder.runLogPath);
      expect(run.content).toBe(`${T0} started\n${T0} two\n${T0} lines`);
      expect(run).toMatchObject({ lineCount: 3, totalLines: 3, hasMore: false });
      const steps = await recorder.openStepLogs('build step');
      await steps.close();
      expect((await store.readLog(steps.stdoutPath)).content).toBe('first try\nsecond try');
      // an unfinished last line counts as a line
      expect(await store.readLog(steps.stderrPath)).toMatchObject({
        content: 'warn warn ',
        totalLines: 1,
      });
    });

    it('serves head, tail, offset and limit windows with exact totals', async () => {
      const { store } = await subject();
      const rec = makeRecord();
      await store.createRun(rec, snapshot);
      const recorder = store.recorderFor(rec);
      const logs = await recorder.openStepLogs('s');
      for (let i = 1; i <= 2500; i++) logs.stdout.write(`line ${i}\n`);
      await logs.close();
      const read = (q: object) => store.readLog(logs.stdoutPath, q);
      expect(await read({ tail: 2 })).toMatchObject({
        content: 'line 2499\nline 2500',
        lineCount: 2,
        totalLines: 2500,
        hasMore: true,
        isEstimate: false,
      });
      expect(await read({ head: 1 })).toMatchObject({ content: 'line 1', hasMore: true });
      expect(await read({ offset: 2499, limit: 5 })).toMatchObject({
        content: 'line 2499\nline 2500',
        hasMore: false,
      });
      expect((await read({})).lineCount).toBe(1000);
      expect(await read({ offset: 3000 })).toMatchObject({ content: '', lineCount: 0 });
      expect(await codeOf(read({ limit: 10_001 }))).toBe('bad_request');
      expect(await codeOf(store.readLog(`${logs.stdoutPath}.none`))).toBe('not_found');
    });
  });

  describe(`${label}: stop requests`, () => {
    it('tells a watcher of another instance once a stop is requested', async () => {
      const { store, another } = await subject();
      const rec = makeRecord({ status: RunStatus.Running });
      await store.createRun(rec, snapshot);
      let calls = 0;
      const stopped = new Promise<void>((resolve) => {
        another().watchStop(rec, {}, () => {
          calls++;
          resolve();
        });
      });
      await store.requestStop(rec);
      await stopped;
      expect(calls).toBe(1);
      expect(await codeOf(store.requestStop({ name: 'etl', dagRunId: 'nope' }))).toBe('not_found');
    });
  });

  describe(`${label}: deletion and retention`, () => {
    it('deletes a run with its children and all their logs', async () => {
      const { store } = await subject();
      const root = makeRecord();
      await store.createRun(root, snapshot);
      const child = makeChildRecord(root);
      await store.createRun(child, snapshot);
      const recorder = store.recorderFor(child);
      recorder.log('child line');
      await recorder.close();
      await store.deleteRun(root);
      expect(await codeOf(store.getRun(root))).toBe('not_found');
      expect(await codeOf(store.getRun(child, { root: child.root }))).toBe('not_found');
      expect(await codeOf(store.readLog(recorder.runLogPath))).toBe('not_found');
      expect(await codeOf(store.deleteRun(root))).toBe('not_found');
    });

    it('deletes ended runs older than the retention, keeping running, queued and busy ones', async () => {
      const { store } = await subject();
      const old = isoPlus(T0, -10 * DAY);
      const mk = (id: string, status: RunStatus, at = old) =>
        makeRecord({ dagRunId: id, status, createdAt: at, finishedAt: at });
      await store.createRun(mk('done', RunStatus.Succeeded), snapshot);
      await store.createRun(mk('failed', RunStatus.Failed), snapshot);
      await store.createRun(mk('recent', RunStatus.Succeeded, isoPlus(T0, -DAY)), snapshot);
      await store.createRun(mk('running', RunStatus.Running), snapshot);
      await store.createRun(mk('queued', RunStatus.Queued), snapshot);
      const parent = mk('parent', RunStatus.Failed);
      await store.createRun(parent, snapshot);
      await store.createRun(makeChildRecord(parent, { status: RunStatus.Running }), snapshot);
      expect(await store.deleteRunsOlderThan('etl', 7)).toBe(2);
      const left = (await store.listRuns({ name: 'etl' })).map((r) => r.dagRunId).sort();
      expect(left).toEqual(['parent', 'queued', 'recent', 'running']);
      expect(await codeOf(store.deleteRunsOlderThan('etl', -1))).toBe('bad_request');
    });
  });
};
