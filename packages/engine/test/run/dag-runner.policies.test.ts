import { describe, expect, it } from 'vitest';
import { NodeStatus, RunStatus } from '@trellis/core';
import { harness, statuses } from '../support/harness.js';

describe('retryPolicy', () => {
  it('retries a failing step until it succeeds, waiting intervalSec * backoff^n capped by maxIntervalSec', async () => {
    const h = harness(
      'steps:\n  - name: a\n    command: x\n    retryPolicy: {limit: 4, intervalSec: 10, backoff: 2, maxIntervalSec: 30}\n',
      { a: [{ exitCode: 1 }, { exitCode: 1 }, { exitCode: 1 }, { exitCode: 1 }, { exitCode: 0 }] },
    );
    const t0 = h.clock.now().getTime();
    const r = await h.run();
    expect(h.executor.count('a')).toBe(5);
    expect(h.clock.sleeps).toEqual([10_000, 20_000, 30_000, 30_000]);
    expect(h.clock.now().getTime() - t0).toBe(90_000);
    expect(r.nodes[0]).toMatchObject({ status: NodeStatus.Succeeded, retryCount: 4, doneCount: 1 });
    expect(r.nodes[0]?.retriedAt).not.toBe('');
  });

  it('uses a fixed interval without backoff', async () => {
    const h = harness(
      'steps:\n  - {name: a, command: x, retryPolicy: {limit: 2, intervalSec: 3}}\n',
      { a: { exitCode: 1 } },
    );
    const r = await h.run();
    expect(h.clock.sleeps).toEqual([3000, 3000]);
    expect(r.nodes[0]).toMatchObject({
      status: NodeStatus.Failed,
      retryCount: 2,
      doneCount: 1,
      error: 'exit status 1',
    });
  });

  it('retries only listed exit codes', async () => {
    const h = harness(
      'steps:\n  - {name: a, command: x, retryPolicy: {limit: 3, exitCode: [75]}}\n',
      { a: [{ exitCode: 75 }, { exitCode: 2 }] },
    );
    const r = await h.run();
    expect(h.executor.count('a')).toBe(2);
    expect(r.nodes[0]).toMatchObject({ status: NodeStatus.Failed, retryCount: 1 });
  });

  it('resolves a limit written as a variable reference', async () => {
    const h = harness(
      'params: [RETRIES: 2]\nsteps:\n  - {name: a, command: x, retryPolicy: {limit: "${RETRIES}"}}\n',
      { a: { exitCode: 1 } },
    );
    expect((await h.run()).nodes[0]?.retryCount).toBe(2);
  });

  it('retries a step killed by a signal', async () => {
    const h = harness('steps:\n  - {name: a, command: x, retryPolicy: {limit: 1}}\n', {
      a: [{ exitCode: null, signal: 'SIGKILL' }, {}],
    });
    const r = await h.run();
    expect(r.nodes[0]).toMatchObject({ status: NodeStatus.Succeeded, retryCount: 1 });
  });
});

describe('repeatPolicy', () => {
  it('repeats until the exit code is listed, counting every execution in doneCount', async () => {
    const h = harness(
      'steps:\n  - {name: a, command: x, repeatPolicy: {repeat: until, exitCode: [0], intervalSec: 1}}\n',
      {
        a: [{ exitCode: 1 }, { exitCode: 1 }, { exitCode: 0 }],
      },
    );
    const r = await h.run();
    expect(r.nodes[0]).toMatchObject({ status: NodeStatus.Succeeded, doneCount: 3 });
  });

  it('repeats while a condition matches its expected value, evaluated after each execution', async () => {
    let n = 0;
    const h = harness(
      'steps:\n  - {name: a, command: x, repeatPolicy: {repeat: while, condition: "`cat state`", expected: busy}}\n',
      {},
      { commands: () => ({ exitCode: 0, stdout: ++n < 3 ? 'busy' : 'idle' }) },
    );
    const r = await h.run();
    expect(h.executor.count('a')).toBe(3);
    expect(r.nodes[0]?.doneCount).toBe(3);
  });

  it('stops at limit executions', async () => {
    const h = harness(
      'steps:\n  - {name: a, command: x, repeatPolicy: {repeat: true, limit: 4}}\n',
    );
    expect((await h.run()).nodes[0]?.doneCount).toBe(4);
  });

  it('waits intervalSec * backoff^doneCount between executions, capped', async () => {
    const h = harness(
      'steps:\n  - {name: a, command: x, repeatPolicy: {repeat: true, limit: 4, intervalSec: 2, backoff: 3, maxIntervalSec: 40}}\n',
    );
    await h.run();
    expect(h.clock.sleeps).toEqual([6000, 18_000, 40_000]);
  });

  it('lets the final execution decide the status', async () => {
    const h = harness(
      'steps:\n  - {name: a, command: x, repeatPolicy: {repeat: while, exitCode: [1], limit: 3}}\n',
      {
        a: [{ exitCode: 1 }, { exitCode: 2 }],
      },
    );
    const r = await h.run();
    expect(r.nodes[0]).toMatchObject({
      status: NodeStatus.Failed,
      doneCount: 2,
      error: 'exit status 2',
    });
  });
});

describe('preconditions', () => {
  it('skips a step whose command precondition exits non-zero, recording why', async () => {
    const h = harness(
      'steps:\n  - {name: a, command: x, preconditions: ["test -f /ready"]}\n',
      {},
      {
        commands: () => ({ exitCode: 1, stdout: '' }),
      },
    );
    const r = await h.run();
    expect(r.nodes[0]?.status).toBe(NodeStatus.Skipped);
    expect(r.nodes[0]?.step.preconditions).toEqual([
      { condition: 'test -f /ready', expected: '', error: 'condition was not met: exit status 1' },
    ]);
    expect(h.executor.count('a')).toBe(0);
  });

  it('compares a backtick condition with expected, literally and by re: regex', async () => {
    const h = harness(
      'steps:\n  - name: a\n    command: x\n    preconditions:\n      - {condition: "`date +%u`", expected: "re:[1-5]"}\n      - {condition: "${ENVNAME}", expected: prod}\n',
      {},
      { commands: () => ({ exitCode: 0, stdout: '3\n' }) },
    );
    const r = await h.run({});
    expect(h.commands.commands).toEqual(['date +%u']);
    // ENVNAME is unset, so the second condition compares the literal text and fails
    expect(r.nodes[0]?.status).toBe(NodeStatus.Skipped);
    expect(r.nodes[0]?.step.preconditions.map((p) => p.error)).toEqual([
      '',
      'condition was not met: expected "prod", got "${ENVNAME}"',
    ]);
  });

  it('cancels the run when a DAG precondition fails; no step starts and onCancel then onExit run', async () => {
    const h = harness(
      'preconditions:\n  - {condition: "`echo no`", expected: "yes"}\nsteps:\n  - {name: a, command: x}\nhandlerOn:\n  cancel: {command: echo cancelled}\n  exit: {command: echo exit}\n  failure: {command: echo failure}\n',
      {},
      { commands: () => ({ exitCode: 0, stdout: 'no' }) },
    );
    const r = await h.run();
    expect(r.status).toBe(RunStatus.Cancelled);
    expect(statuses(r)).toEqual({ a: NodeStatus.NotStarted });
    expect(r.preconditions).toEqual([
      {
        condition: '`echo no`',
        expected: 'yes',
        error: 'condition was not met: expected "yes", got "no"',
      },
    ]);
    expect(r.onCancel?.status).toBe(NodeStatus.Succeeded);
    expect(r.onExit?.status).toBe(NodeStatus.Succeeded);
    expect(r.onFailure).toBeUndefined();
    expect(h.executor.calls.map((c) => c.step.name)).toEqual(['onCancel', 'onExit']);
  });
});

describe('maxOutputSize', () => {
  it('fails a step whose captured output exceeds the limit, with a message naming it', async () => {
    const h = harness('maxOutputSize: 10\nsteps:\n  - {name: a, command: x, output: OUT}\n', {
      a: { output: '12345678901', outputExceeded: true },
    });
    const r = await h.run();
    expect(r.nodes[0]?.status).toBe(NodeStatus.Failed);
    expect(r.nodes[0]?.error).toBe(
      "output exceeded the maximum size of 10 bytes (maxOutputSize); the full output is in the step's log",
    );
    expect(h.executor.calls[0]?.captureLimit).toBe(10);
  });

  it('does not capture stdout for a step that needs no output', async () => {
    const h = harness('steps:\n  - {name: a, command: x}\n');
    await h.run();
    expect(h.executor.calls[0]?.captureLimit).toBeUndefined();
  });
});
