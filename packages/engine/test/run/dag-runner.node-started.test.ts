import { describe, expect, it } from 'vitest';
import { RunStatus } from '@trellis/core';
import type { ChildRunRequest, ChildRunner, RunHook } from '@trellis/engine';
import { harness } from '../support/harness.js';

/** A hook that gives every node a TRACEPARENT naming it, like the tracer does. */
const envHook = (throwing = false): RunHook => ({
  setUp: () =>
    Promise.resolve({
      nodeStarted: (n) => {
        if (throwing) throw new Error('tracer broke');
        return { TRACEPARENT: `tp-of-${n.step.name}` };
      },
    }),
});

describe('the nodeStarted run hook', () => {
  it("adds the hook's variables to each step's and handler's process environment", async () => {
    const h = harness(
      'steps:\n  - {name: a, command: echo $TRACEPARENT}\nhandlerOn:\n  exit: {command: bye}\n',
      {},
      { runHooks: [envHook()] },
    );
    await h.run();
    expect(h.executor.calls.map((c) => [c.step.name, c.env.TRACEPARENT])).toEqual([
      ['a', 'tp-of-a'],
      ['onExit', 'tp-of-onExit'],
    ]);
    expect(h.executor.calls[0]?.step.args).toEqual(['tp-of-a']);
  });

  it("passes the step's TRACEPARENT to a child run", async () => {
    const requests: ChildRunRequest[] = [];
    const children: ChildRunner = {
      run: (req) => {
        requests.push(req);
        return Promise.resolve({
          name: 'sub',
          dagRunId: req.dagRunId,
          status: RunStatus.Succeeded,
          outputs: {},
        });
      },
    };
    const h = harness(
      'steps:\n  - {name: call, run: sub}\n',
      {},
      {
        runHooks: [envHook()],
        children,
      },
    );
    await h.run();
    expect(requests[0]?.traceparent).toBe('tp-of-call');
  });

  it('logs a failing hook and runs the step without its variables', async () => {
    const h = harness('steps:\n  - {name: a, command: x}\n', {}, { runHooks: [envHook(true)] });
    const r = await h.run();
    expect(r.status).toBe(RunStatus.Succeeded);
    expect(h.executor.calls[0]?.env.TRACEPARENT).toBeUndefined();
    expect(h.recorder.lines.join('\n')).toContain('a node-start hook failed: tracer broke');
  });
});
