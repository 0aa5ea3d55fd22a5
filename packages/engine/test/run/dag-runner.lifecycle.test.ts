import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { NodeStatus, RunStatus } from '@trellis/core';
import { FakeClock, untilStopped } from '@trellis/testkit';
import { childRunner, harness, statuses } from '../support/harness.js';

describe('handlers', () => {
  it('runs onSuccess then onExit after a successful run, with DAG_RUN_STATUS', async () => {
    const h = harness(
      'steps:\n  - {name: a, command: x}\nhandlerOn:\n  success: {command: ok}\n  failure: {command: bad}\n  exit: {command: bye}\n',
    );
    const r = await h.run();
    expect(h.executor.calls.map((c) => c.step.name)).toEqual(['a', 'onSuccess', 'onExit']);
    expect(h.executor.calls[1]?.env.DAG_RUN_STATUS).toBe('finished');
    expect(r.onSuccess?.status).toBe(NodeStatus.Succeeded);
    expect(r.onExit?.status).toBe(NodeStatus.Succeeded);
    expect(r.onFailure).toBeUndefined();
  });

  it('runs onFailure then onExit after a failed run', async () => {
    const h = harness(
      'steps:\n  - {name: a, command: x}\nhandlerOn:\n  success: {command: ok}\n  failure: {command: bad}\n  exit: {command: bye}\n',
      { a: { exitCode: 1 } },
    );
    await h.run();
    expect(h.executor.calls.map((c) => c.step.name)).toEqual(['a', 'onFailure', 'onExit']);
    expect(h.executor.calls[1]?.env.DAG_RUN_STATUS).toBe('failed');
  });

  it('runs onSuccess for a partial success', async () => {
    const h = harness(
      'steps:\n  - {name: a, command: x, continueOn: {failure: true}}\n  - {name: b, command: x}\nhandlerOn:\n  success: {command: ok}\n',
      { a: { exitCode: 1 } },
    );
    const r = await h.run();
    expect(r.status).toBe(RunStatus.PartiallySucceeded);
    expect(r.onSuccess?.status).toBe(NodeStatus.Succeeded);
  });

  it('fails a successful run whose handler fails, and onExit then sees "failed"', async () => {
    const h = harness(
      'steps:\n  - {name: a, command: x}\nhandlerOn:\n  success: {command: ok}\n  exit: {command: bye}\n',
      { onSuccess: { exitCode: 1 } },
    );
    const r = await h.run();
    expect(r.status).toBe(RunStatus.Failed);
    expect(h.executor.calls[2]?.env.DAG_RUN_STATUS).toBe('failed');
  });

  it('gives handlers every output of the run', async () => {
    const h = harness(
      'type: graph\nsteps:\n  - {name: a, command: x, output: A}\n  - {name: b, command: x, output: B}\nhandlerOn:\n  exit: {command: "echo ${A} ${B}"}\n',
      {
        a: { output: '1' },
        b: { output: '2' },
      },
    );
    await h.run();
    expect(h.executor.calls.find((c) => c.step.name === 'onExit')?.step.cmdWithArgs).toBe(
      'echo 1 2',
    );
  });
});

describe('stop and timeout', () => {
  it('sends the step its signalOnStop with maxCleanUpTimeSec as grace, then cancels the run and runs onCancel and onExit', async () => {
    const stop = new AbortController();
    const h = harness(
      'maxCleanUpTimeSec: 7\nsteps:\n  - {name: a, command: x, signalOnStop: SIGINT}\n  - {name: b, command: x}\nhandlerOn:\n  cancel: {command: c}\n  exit: {command: e}\n',
      {
        a: (ctx) => {
          setImmediate(() => stop.abort());
          return untilStopped(ctx);
        },
      },
    );
    const r = await h.run({ stop: stop.signal });
    const a = h.executor.calls[0];
    expect(a?.stop.signal).toBe('SIGINT');
    expect(a?.stop.graceMs).toBe(7000);
    expect(statuses(r)).toEqual({ a: NodeStatus.Cancelled, b: NodeStatus.NotStarted });
    expect(r.nodes[0]?.error).toBe('stopped (signal SIGINT)');
    expect(r.status).toBe(RunStatus.Cancelled);
    expect([r.onCancel?.status, r.onExit?.status]).toEqual([
      NodeStatus.Succeeded,
      NodeStatus.Succeeded,
    ]);
  });

  it('times out after timeoutSec: running steps are stopped, the rest cancelled, the run fails with a message, handlers still run', async () => {
    const clock = new FakeClock();
    const h = harness(
      'timeoutSec: 30\nsteps:\n  - {name: a, command: x}\n  - {name: b, command: x}\nhandlerOn:\n  failure: {command: f}\n',
      { a: untilStopped },
      { clock },
    );
    const running = h.run();
    await once(h.events, 'node:statusChanged');
    expect(clock.pending).toBe(1);
    await clock.advanceBy(30_000);
    const r = await running;
    expect(statuses(r)).toEqual({ a: NodeStatus.Cancelled, b: NodeStatus.Cancelled });
    expect(r.status).toBe(RunStatus.Failed);
    expect(r.error).toBe('run timed out after 30s (timeoutSec)');
    expect(r.onFailure?.status).toBe(NodeStatus.Succeeded);
  });
});

describe('child DAGs', () => {
  it('runs the child, records it with root and parent, and exposes its outputs as ${VAR.outputs.NAME}', async () => {
    const children = childRunner(RunStatus.Succeeded, { TOTAL: '42' });
    const h = harness(
      'steps:\n  - {name: a, run: sub, params: "X=1", output: CHILD}\n  - {name: b, command: "echo ${CHILD.outputs.TOTAL}"}\n',
      {},
      { children },
    );
    const r = await h.run();
    expect(children.requests[0]).toMatchObject({
      target: 'sub',
      params: 'X=1',
      parent: { name: 'test-dag', dagRunId: 'run-0001' },
      root: { name: 'test-dag', dagRunId: 'run-0001' },
    });
    expect(r.nodes[0]?.children).toEqual([
      {
        dagRunId: children.requests[0]?.dagRunId,
        name: 'sub',
        params: 'X=1',
        status: RunStatus.Succeeded,
      },
    ]);
    expect(JSON.parse(r.nodes[0]?.outputs.CHILD ?? '{}')).toEqual({
      name: 'sub',
      params: 'X=1',
      outputs: { TOTAL: '42' },
    });
    expect(h.recorder.stdoutOf('a')).toContain('"TOTAL": "42"');
    expect(h.executor.calls[0]?.step.cmdWithArgs).toBe('echo 42');
  });

  it('maps the child status to the step: partial success stays partial, failure fails', async () => {
    const partial = harness(
      'steps:\n  - {name: a, run: sub}\n',
      {},
      { children: childRunner(RunStatus.PartiallySucceeded) },
    );
    expect((await partial.run()).nodes[0]?.status).toBe(NodeStatus.PartiallySucceeded);
    const failed = harness(
      'steps:\n  - {name: a, run: sub}\n',
      {},
      { children: childRunner(RunStatus.Failed) },
    );
    const r = await failed.run();
    expect(r.nodes[0]?.status).toBe(NodeStatus.Failed);
    expect(r.nodes[0]?.error).toMatch(
      /^child DAG run [0-9a-f]{32} of "sub" ended with status: failed$/,
    );
  });

  it('starts one child per distinct parallel item with ITEM in its params, and aggregates the results', async () => {
    const children = childRunner(RunStatus.Succeeded, { OK: 'yes' });
    const h = harness(
      'steps:\n  - {name: a, run: sub, params: "REGION=${ITEM}", parallel: [eu, us, eu]}\n',
      {},
      { children },
    );
    const r = await h.run();
    expect(children.requests.map((q) => q.params).sort()).toEqual(['REGION=eu', 'REGION=us']);
    expect(new Set(children.requests.map((q) => q.dagRunId)).size).toBe(2);
    expect(r.nodes[0]?.children).toHaveLength(2);
    const agg = JSON.parse(h.recorder.stdoutOf('a')) as { summary: unknown };
    expect(agg.summary).toEqual({ total: 2, succeeded: 2, failed: 0 });
  });
});

describe('dry run, events and the record', () => {
  it('executes nothing in a dry run, and every step succeeds saying what it would run', async () => {
    const h = harness('steps:\n  - echo a\n  - {name: b, command: x, preconditions: ["false"]}\n');
    const r = await h.run({ dryRun: true });
    expect(h.executor.calls).toHaveLength(0);
    expect(h.commands.commands).toHaveLength(0);
    expect(r.status).toBe(RunStatus.Succeeded);
    expect(h.recorder.stdoutOf('step 1')).toContain('[dry run] would run (shell, in /tmp): echo a');
  });

  it('saves with increasing revisions, the last save being the final record', async () => {
    const h = harness('steps:\n  - echo a\n  - echo b\n');
    const r = await h.run();
    const revisions = h.recorder.saves.map((s) => s.revision);
    expect(revisions).toEqual([...revisions].sort((a, b) => a - b));
    expect(h.recorder.last).toEqual(r);
  });

  it('emits run:started, node:statusChanged and run:finished', async () => {
    const h = harness('steps:\n  - echo a\n');
    const seen: string[] = [];
    h.events.on('run:started', () => seen.push('started'));
    h.events.on('node:statusChanged', (_r, name, status) => seen.push(`${name}:${status}`));
    h.events.on('run:finished', (r) => seen.push(`finished:${r.status}`));
    await h.run();
    expect(seen).toEqual(['started', 'step 1:1', 'step 1:4', 'finished:4']);
  });

  it('does not re-run nodes that already succeeded (a retried run)', async () => {
    const h = harness('steps:\n  - {name: a, command: x}\n  - {name: b, command: x}\n');
    const first = await h.run();
    const record = structuredClone(first);
    record.dagRunId = 'run-0002';
    const b = record.nodes[1];
    if (b) Object.assign(b, { status: NodeStatus.NotStarted, doneCount: 0 });
    const second = await h.run({ record });
    expect(h.executor.calls.map((c) => c.step.name)).toEqual(['a', 'b', 'b']);
    expect(second.status).toBe(RunStatus.Succeeded);
  });
});
