import { describe, expect, it } from 'vitest';
import { NodeStatus, RunStatus } from '@trellis/core';
import { harness, statuses } from '../support/harness.js';

const { Succeeded, Failed, Cancelled, Skipped, NotStarted } = NodeStatus;

/**
 * The most steps running at once in a graph of `count` independent steps under `maxActiveSteps`
 * (each step yields to the event loop once before it ends).
 */
const peakActive = async (count: number, maxActiveSteps: number): Promise<number> => {
  let active = 0;
  let peak = 0;
  const slow = async () => {
    active++;
    peak = Math.max(peak, active);
    await new Promise((r) => setImmediate(r));
    active--;
    return {};
  };
  const steps = Array.from({ length: count }, (_, i) => `  - {name: s${i}, command: x}`).join('\n');
  const h = harness(
    `type: graph\nmaxActiveSteps: ${maxActiveSteps}\nsteps:\n${steps}\n`,
    Object.fromEntries(Array.from({ length: count }, (_, i) => [`s${i}`, slow])),
  );
  await h.run();
  return peak;
};

describe('readiness and status propagation', () => {
  it('runs a chain in order and finishes the run', async () => {
    const h = harness('steps:\n  - echo a\n  - echo b\n  - echo c\n');
    const r = await h.run();
    expect(h.executor.calls.map((c) => c.step.cmdWithArgs)).toEqual(['echo a', 'echo b', 'echo c']);
    expect(r.status).toBe(RunStatus.Succeeded);
    expect(Object.values(statuses(r))).toEqual([Succeeded, Succeeded, Succeeded]);
    expect(
      r.nodes.every((n) => n.doneCount === 1 && n.startedAt !== '' && n.finishedAt !== ''),
    ).toBe(true);
    expect(r.startedAt).not.toBe('');
    expect(r.finishedAt).not.toBe('');
  });

  it('in a graph, waits only for explicit depends', async () => {
    const order: string[] = [];
    const rec = (name: string) => () => {
      order.push(name);
      return {};
    };
    const h = harness(
      'type: graph\nmaxActiveSteps: -1\nsteps:\n  - {name: a, command: x}\n  - {name: b, command: x}\n  - {name: c, command: x, depends: [a, b]}\n',
      { a: rec('a'), b: rec('b'), c: rec('c') },
    );
    await h.run();
    expect(order.indexOf('c')).toBe(2);
  });

  it('cancels the dependents of a failed step with "upstream failed" and fails the run', async () => {
    const h = harness(
      'steps:\n  - {name: a, command: x}\n  - {name: b, command: x}\n  - {name: c, command: x}\n',
      {
        a: { exitCode: 3 },
      },
    );
    const r = await h.run();
    expect(statuses(r)).toEqual({ a: Failed, b: Cancelled, c: Cancelled });
    expect(r.nodes[0]?.error).toBe('exit status 3');
    expect(r.nodes[1]?.error).toBe('upstream failed');
    expect(r.nodes[1]?.startedAt).toBe('');
    expect(r.status).toBe(RunStatus.Failed);
  });

  it('skips the dependents of a skipped step with "upstream skipped" and still succeeds', async () => {
    const h = harness(
      'steps:\n  - {name: a, command: x, preconditions: ["test -f /nope"]}\n  - {name: b, command: x}\n',
      {},
      { commands: () => ({ exitCode: 1, stdout: '' }) },
    );
    const r = await h.run();
    expect(statuses(r)).toEqual({ a: Skipped, b: Skipped });
    expect(r.nodes[1]?.error).toBe('upstream skipped');
    expect(r.status).toBe(RunStatus.Succeeded);
  });

  it('leaves startedAt and finishedAt both empty on a step that never ran (spec: Conventions)', async () => {
    const failed = await harness('steps:\n  - {name: a, command: x}\n  - {name: b, command: x}\n', {
      a: { exitCode: 3 },
    }).run();
    const skipped = await harness(
      'steps:\n  - {name: a, command: x, preconditions: ["test -f /nope"]}\n  - {name: b, command: x}\n',
      {},
      { commands: () => ({ exitCode: 1, stdout: '' }) },
    ).run();
    for (const r of [failed, skipped]) {
      expect(r.nodes[1]?.status).not.toBe(NotStarted);
      expect(r.nodes[1]).toMatchObject({ startedAt: '', finishedAt: '' });
      // the first step ran (its preconditions too): both times are set
      expect(r.nodes[0]?.startedAt).not.toBe('');
      expect(r.nodes[0]?.finishedAt).not.toBe('');
    }
  });

  it('lets dependents of a skipped step run with continueOn.skipped', async () => {
    const h = harness(
      'steps:\n  - {name: a, command: x, preconditions: ["false"], continueOn: {skipped: true}}\n  - {name: b, command: x}\n',
      {},
      { commands: () => ({ exitCode: 1, stdout: '' }) },
    );
    expect(statuses(await h.run())).toEqual({ a: Skipped, b: Succeeded });
  });

  it('runs at most maxActiveSteps steps at once', async () => {
    expect(await peakActive(6, 2)).toBe(2);
  });

  it('runs every ready step at once with maxActiveSteps -1', async () => {
    expect(await peakActive(5, -1)).toBe(5);
  });

  it('waits delaySec before the first step', async () => {
    const h = harness('delaySec: 5\nsteps:\n  - echo a\n');
    await h.run();
    expect(h.clock.sleeps[0]).toBe(5000);
  });

  it('runs the members of a parallel group after the step before it and before the next', async () => {
    const order: string[] = [];
    const rec = (n: string) => () => {
      order.push(n);
      return {};
    };
    const h = harness(
      'maxActiveSteps: -1\nsteps:\n  - {name: a, command: x}\n  - - {name: b1, command: x}\n    - {name: b2, command: x}\n  - {name: c, command: x}\n',
      {
        a: rec('a'),
        b1: rec('b1'),
        b2: rec('b2'),
        c: rec('c'),
      },
    );
    await h.run();
    expect(order[0]).toBe('a');
    expect(order[3]).toBe('c');
  });
});

describe('run status', () => {
  it('is partial success (6) when a step failed with continueOn.failure and another succeeded', async () => {
    const h = harness(
      'steps:\n  - {name: a, command: x, continueOn: {failure: true}}\n  - {name: b, command: x}\n',
      { a: { exitCode: 1 } },
    );
    const r = await h.run();
    expect(statuses(r)).toEqual({ a: Failed, b: Succeeded });
    expect(r.status).toBe(RunStatus.PartiallySucceeded);
  });

  it('is failed when every step failed, even with continueOn.failure', async () => {
    const h = harness('steps:\n  - {name: a, command: x, continueOn: {failure: true}}\n', {
      a: { exitCode: 1 },
    });
    expect((await h.run()).status).toBe(RunStatus.Failed);
  });

  it('continues on a listed exit code, and on stdout matching an output pattern', async () => {
    const h = harness(
      'steps:\n  - {name: a, command: x, continueOn: {exitCode: [3]}}\n  - {name: b, command: x, continueOn: {output: "re:^WARN"}}\n  - {name: c, command: x}\n',
      { a: { exitCode: 3 }, b: { exitCode: 1, output: 'INFO\nWARN disk\n' } },
    );
    const r = await h.run();
    expect(statuses(r)).toEqual({ a: Failed, b: Failed, c: Succeeded });
    expect(r.status).toBe(RunStatus.PartiallySucceeded);
  });

  it('does not continue when the exit code or output does not match', async () => {
    const h = harness(
      'steps:\n  - {name: a, command: x, continueOn: {exitCode: [3], output: WARN}}\n  - {name: b, command: x}\n',
      {
        a: { exitCode: 4, output: 'all fine' },
      },
    );
    expect(statuses(await h.run())).toEqual({ a: Failed, b: Cancelled });
  });

  it('marks a continued failure as success with markSuccess, keeping its error text', async () => {
    const h = harness(
      'steps:\n  - {name: a, command: x, continueOn: {failure: true, markSuccess: true}}\n  - {name: b, command: x}\n',
      {
        a: { exitCode: 3 },
      },
    );
    const r = await h.run();
    expect(statuses(r)).toEqual({ a: Succeeded, b: Succeeded });
    expect(r.nodes[0]?.error).toBe('exit status 3');
    expect(r.status).toBe(RunStatus.Succeeded);
  });

  it('reports a missing executor as a step failure, not an exception', async () => {
    const h = harness('steps:\n  - {name: a, run: other}\n');
    const r = await h.run();
    expect(r.nodes[0]?.error).toBe('child DAG runs are not available in this process');
    expect(r.status).toBe(RunStatus.Failed);
  });

  it('leaves steps after a stop not started', async () => {
    const stop = new AbortController();
    const h = harness('steps:\n  - {name: a, command: x}\n  - {name: b, command: x}\n', {
      a: (ctx) =>
        new Promise((resolve) => {
          ctx.stop.abort.addEventListener('abort', () =>
            resolve({ exitCode: null, signal: ctx.stop.signal }),
          );
          stop.abort();
        }),
    });
    const r = await h.run({ stop: stop.signal });
    expect(statuses(r)).toEqual({ a: Cancelled, b: NotStarted });
    expect(r.status).toBe(RunStatus.Cancelled);
  });
});
