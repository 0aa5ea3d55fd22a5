import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  NodeStatus,
  RunStatus,
  sequentialIdGenerator,
  systemClock,
  type IdGenerator,
} from '@trellis/core';
import type { EngineEvents } from '@trellis/engine';
import { recoverLostRuns } from '@trellis/scheduler';
import { currentOwner, processStartTime } from '@trellis/store';
import type { DagRunRecord } from '@trellis/spec';
import { createTempHome, localRunService, type TempHome } from '../support/local-run-service.js';

let t: TempHome;

const service = (ids?: IdGenerator) => localRunService(t, ids ? { ids } : {});

const dag = (name: string, yaml: string): void => t.dag(name, yaml);

/** Resolves when `step` starts running: call it before starting the run (a step may start first). */
const stepStarted = (events: EngineEvents, step: string): Promise<DagRunRecord> =>
  new Promise((resolve) => {
    const on = (r: DagRunRecord, name: string, status: number): void => {
      if (name === step && status === NodeStatus.Running) {
        events.off('node:statusChanged', on);
        resolve(r);
      }
    };
    events.on('node:statusChanged', on);
  });

beforeEach(() => {
  t = createTempHome('trellis-svc-');
});
afterEach(() => t.cleanup());

describe('RunService on the file store and /bin/sh', () => {
  it('runs a DAG, stores its record and the step logs', async () => {
    dag('hello', 'params: WHO=world\nsteps:\n  - name: greet\n    command: echo "hello ${WHO}"\n');
    const { runs, store } = service();
    const started = await runs.start({ dag: 'hello', params: '{"WHO":"trellis"}' });
    const final = await started.done;
    expect(final.status).toBe(RunStatus.Succeeded);
    const stored = await store.getRun({ name: 'hello', dagRunId: 'run-0001' });
    expect(stored).toMatchObject({
      status: RunStatus.Succeeded,
      params: [{ name: 'WHO', value: 'trellis' }],
    });
    expect(readFileSync(stored.nodes[0]?.stdout ?? '', 'utf8')).toBe('hello trellis\n');
    expect(readFileSync(stored.log, 'utf8')).toMatch(/step "greet" started/);
  });

  it('runs a child of a child, each stored under the root run with root and parent ids', async () => {
    dag(
      'top',
      'steps:\n  - {name: call-mid, run: mid, output: MID}\n  - {name: show, command: "echo ${MID.outputs.LEAF}"}\n',
    );
    dag(
      'mid',
      'steps:\n  - {name: call-leaf, run: leaf, output: LEAFOUT}\n  - {name: pass, command: "echo ${LEAFOUT.outputs.LEAF}", output: LEAF}\n',
    );
    dag('leaf', 'steps:\n  - {name: make, command: echo deep, output: LEAF}\n');
    const { runs, store } = service();
    const final = await (await runs.start({ dag: 'top' })).done;
    expect(final.status).toBe(RunStatus.Succeeded);
    expect(readFileSync(final.nodes[1]?.stdout ?? '', 'utf8')).toBe('deep\n');
    const midRef = final.nodes[0]?.children[0];
    expect(midRef?.status).toBe(RunStatus.Succeeded);
    const root = { name: 'top', dagRunId: final.dagRunId };
    const mid = await store.getRun({ name: 'mid', dagRunId: midRef?.dagRunId ?? '' }, { root });
    expect(mid.parent).toEqual(root);
    const leaf = await store.getRun(
      { name: 'leaf', dagRunId: mid.nodes[0]?.children[0]?.dagRunId ?? '' },
      { root },
    );
    expect(leaf.root).toEqual(root);
    expect(leaf.parent).toEqual({ name: 'mid', dagRunId: mid.dagRunId });
  });

  it('retries a failed run as a new run, keeping the steps that succeeded', async () => {
    const counter = join(t.home, 'count');
    const flag = join(t.home, 'ok');
    dag(
      'flaky',
      `steps:\n  - {name: once, command: "echo x >> ${counter}"}\n  - {name: gate, command: "test -f ${flag}"}\n  - {name: after, command: "true"}\n`,
    );
    const { runs } = service();
    const first = await (await runs.start({ dag: 'flaky' })).done;
    expect(first.status).toBe(RunStatus.Failed);
    writeFileSync(flag, '');
    const second = await (
      await runs.retry({ name: 'flaky', dagRunId: first.dagRunId }, { newRunId: 'retry-1' })
    ).done;
    expect(second.dagRunId).toBe('retry-1');
    expect(second.status).toBe(RunStatus.Succeeded);
    expect(readFileSync(counter, 'utf8')).toBe('x\n'); // "once" did not run again
    expect(second.nodes.map((n) => n.status)).toEqual([
      NodeStatus.Succeeded,
      NodeStatus.Succeeded,
      NodeStatus.Succeeded,
    ]);
  });

  it('retries only the named step with --step', async () => {
    const counter = join(t.home, 'count');
    dag(
      'two',
      `steps:\n  - {name: a, command: "echo a >> ${counter}"}\n  - {name: b, command: "echo b >> ${counter}"}\n`,
    );
    const { runs } = service();
    const first = await (await runs.start({ dag: 'two' })).done;
    await (
      await runs.retry({ name: 'two', dagRunId: first.dagRunId }, { stepName: 'a' })
    ).done;
    expect(readFileSync(counter, 'utf8')).toBe('a\nb\na\n');
  });

  it('refuses to retry a running run, and a step that does not exist', async () => {
    dag('slow', 'steps:\n  - {name: wait, command: "sleep 30"}\n');
    const { runs, events } = service();
    const waiting = stepStarted(events, 'wait');
    const started = await runs.start({ dag: 'slow' });
    await waiting;
    await expect(
      runs.retry({ name: 'slow', dagRunId: started.record.dagRunId }),
    ).rejects.toMatchObject({ code: 'already_running' });
    await runs.stop({ name: 'slow', dagRunId: started.record.dagRunId });
    const final = await started.done;
    await expect(
      runs.retry({ name: 'slow', dagRunId: final.dagRunId }, { stepName: 'nope' }),
    ).rejects.toMatchObject({ code: 'not_found' });
  });

  it('stops a run from another service instance on the same store (another process in production)', async () => {
    dag(
      'slow',
      'maxCleanUpTimeSec: 2\nsteps:\n  - {name: wait, command: "sleep 30"}\n  - {name: never, command: "true"}\nhandlerOn:\n  cancel: {command: "echo cancelled"}\n',
    );
    const a = service();
    const b = service(sequentialIdGenerator('other-'));
    const waiting = stepStarted(a.events, 'wait');
    const started = await a.runs.start({ dag: 'slow' });
    await waiting;
    await b.runs.stop({ name: 'slow', dagRunId: started.record.dagRunId });
    const final = await started.done;
    expect(final.status).toBe(RunStatus.Cancelled);
    expect(final.nodes.map((n) => n.status)).toEqual([NodeStatus.Cancelled, NodeStatus.NotStarted]);
    expect(final.onCancel?.status).toBe(NodeStatus.Succeeded);
    await expect(b.runs.stop({ name: 'slow', dagRunId: final.dagRunId })).rejects.toMatchObject({
      code: 'not_running',
    });
  });

  it('kills a step that ignores SIGTERM after maxCleanUpTimeSec', async () => {
    dag(
      'stubborn',
      'maxCleanUpTimeSec: 1\nsteps:\n  - name: ignore\n    command: trap "" TERM; echo ready; sleep 30 & wait\n',
    );
    const { runs, events } = service();
    const ignoring = stepStarted(events, 'ignore');
    const started = await runs.start({ dag: 'stubborn' });
    const running = await ignoring;
    // the trap is in place once the step printed "ready" (bounded wait on its log file)
    const out = running.nodes[0]?.stdout ?? '';
    for (
      let i = 0;
      i < 500 && !(existsSync(out) && readFileSync(out, 'utf8').includes('ready'));
      i++
    ) {
      await new Promise((r) => setTimeout(r, 10));
    }
    await runs.stop({ name: 'stubborn', dagRunId: started.record.dagRunId });
    const final = await started.done;
    expect(final.nodes[0]?.status).toBe(NodeStatus.Cancelled);
    expect(final.nodes[0]?.error).toBe('stopped (signal SIGKILL)');
  });

  it('records a step killed by a signal from outside as failed with the signal', async () => {
    dag('victim', 'steps:\n  - {name: target, command: "sleep 30"}\n');
    const { runs, events, store } = service();
    const targeted = stepStarted(events, 'target');
    const started = await runs.start({ dag: 'victim' });
    await targeted;
    // wait until the process group is recorded, then kill it like an OOM killer would
    let pid: number | undefined;
    while (pid === undefined) {
      pid = (await store.getRun({ name: 'victim', dagRunId: started.record.dagRunId })).nodes[0]
        ?.pid;
      if (pid === undefined) await new Promise((r) => setImmediate(r));
    }
    process.kill(-pid, 'SIGKILL');
    const final = await started.done;
    expect(final.nodes[0]).toMatchObject({
      status: NodeStatus.Failed,
      error: 'killed by signal SIGKILL',
    });
    expect(final.status).toBe(RunStatus.Failed);
  });

  it('streams a 50 MB output to the step log', async () => {
    dag('big', 'steps:\n  - {name: flood, command: "head -c 52428800 /dev/zero"}\n');
    const { runs } = service();
    const final = await (await runs.start({ dag: 'big' })).done;
    expect(final.status).toBe(RunStatus.Succeeded);
    expect(statSync(final.nodes[0]?.stdout ?? '').size).toBe(52_428_800);
  });

  it('marks a run whose owner process died as failed, and kills its leftover step process group', async () => {
    dag('orphan', 'steps:\n  - {name: s, command: "true"}\n');
    const { runs, store } = service();
    const done = await (await runs.start({ dag: 'orphan' })).done;
    // A dead owner: a process that ran and exited. A leftover step: a live sleep in its own group.
    const dead = spawn('true');
    await once(dead, 'exit');
    const leftover = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
    const leftoverExit = once(leftover, 'exit');
    const record = structuredClone(done);
    record.status = RunStatus.Running;
    record.finishedAt = '';
    record.owner = {
      pid: dead.pid ?? 1,
      host: currentOwner().host,
      processStart: '2020-01-01T00:00:00.000Z',
      workerId: 'local',
    };
    const node = record.nodes[0];
    if (node)
      Object.assign(node, {
        status: NodeStatus.Running,
        pid: leftover.pid,
        startedAt: new Date(Date.now() - 1000).toISOString(),
        finishedAt: '',
      });
    record.revision += 10;
    await store.saveRun(record);

    const recovered = await recoverLostRuns({
      store,
      clock: systemClock,
      processes: { processStartTime },
    });
    expect(recovered.map((r) => r.dagRunId)).toEqual([done.dagRunId]);
    const after = await store.getRun({ name: 'orphan', dagRunId: done.dagRunId });
    expect(after.status).toBe(RunStatus.Failed);
    expect(after.error).toMatch(
      /^the process that ran this run \(pid \d+ on .+\) died before it finished; marked failed at /,
    );
    expect(after.nodes[0]).toMatchObject({
      status: NodeStatus.Failed,
      error: expect.stringMatching(/died$/) as unknown,
    });
    const [, signal] = (await leftoverExit) as [number | null, string | null];
    expect(signal).toBe('SIGKILL');
    expect(existsSync(join(t.home, 'data'))).toBe(true);
  });

  it('deletes runs older than histRetentionDays at the start of a new run, keeping recent ones', async () => {
    dag('kept', 'histRetentionDays: 2\nsteps:\n  - "true"\n');
    const { runs, store } = service();
    const old = await (await runs.start({ dag: 'kept' })).done;
    const aged = structuredClone(old);
    aged.createdAt =
      aged.startedAt =
      aged.finishedAt =
        new Date(Date.now() - 3 * 86_400_000).toISOString();
    aged.revision += 10;
    await store.saveRun(aged);
    // another process (each applies retention at most once a minute per DAG)
    const recent = await (await service().runs.start({ dag: 'kept', dagRunId: 'recent' })).done;
    let listed = await store.listRuns({ name: 'kept' });
    for (let i = 0; i < 100 && listed.length > 1; i++) {
      await new Promise((r) => setTimeout(r, 10)); // the clean-up runs beside the new run
      listed = await store.listRuns({ name: 'kept' });
    }
    expect(listed.map((r) => r.dagRunId)).toEqual([recent.dagRunId]);
    expect(existsSync(old.log)).toBe(false);
  });

  it('refuses a DAG with problems, listing them', async () => {
    dag('broken', 'steps:\n  - {name: a, comand: x}\n');
    const { runs } = service();
    await expect(runs.start({ dag: 'broken' })).rejects.toMatchObject({
      code: 'bad_request',
      message: expect.stringContaining('unknown field "comand"') as unknown,
    });
    await expect(runs.start({ dag: 'ghost' })).rejects.toMatchObject({ code: 'not_found' });
  });

  it('rejects an invalid run id and bad params', async () => {
    dag('ok', 'steps:\n  - "true"\n');
    const { runs } = service();
    await expect(runs.start({ dag: 'ok', dagRunId: 'bad id!' })).rejects.toMatchObject({
      code: 'bad_request',
    });
    await expect(runs.start({ dag: 'ok', params: '{"unterminated' })).rejects.toMatchObject({
      code: 'bad_request',
    });
  });
});
