import { describe, expect, it } from 'vitest';
import { NodeStatus, RunStatus } from '@trellis/core';
import type { DagRunRecord, NodeRecord } from '@trellis/spec';
import type { RunHook, RunHookContext } from '@trellis/engine';
import { ScriptedExecutor } from '@trellis/testkit';
import { harness } from '../support/harness.js';

/** A hook that records what the engine tells it. */
const recordingHook = (
  over: { executor?: ScriptedExecutor; throwing?: boolean } = {},
): RunHook & {
  events: string[];
  ctx?: RunHookContext;
  finished?: DagRunRecord;
  nodes: NodeRecord[];
} => {
  const hook = {
    events: [] as string[],
    nodes: [] as NodeRecord[],
    ctx: undefined as RunHookContext | undefined,
    finished: undefined as DagRunRecord | undefined,
    setUp: (ctx: RunHookContext) => {
      hook.ctx = ctx;
      hook.events.push('setUp');
      return Promise.resolve({
        executorFor: (step: { name: string; executor: { type: string } }) =>
          step.executor.type === 'docker' ? over.executor : undefined,
        nodeFinished: (n: NodeRecord) => {
          hook.events.push(`node ${n.step.name}`);
          hook.nodes.push(n);
          return over.throwing ? Promise.reject(new Error('smtp down')) : Promise.resolve();
        },
        tearDown: () => {
          hook.events.push('tearDown');
          return Promise.resolve();
        },
        runFinished: (r: DagRunRecord) => {
          hook.events.push(`finished ${r.status}`);
          hook.finished = r;
          return over.throwing ? Promise.reject(new Error('smtp down')) : Promise.resolve();
        },
      });
    },
  };
  return hook as never;
};

describe('run hooks', () => {
  it('sets up once before the first step, tears down after the handlers, then reports the final status', async () => {
    const hook = recordingHook();
    const h = harness(
      'env:\n  - MODE: batch\nsteps:\n  - {name: a, command: x}\n  - {name: b, command: y}\nhandlerOn:\n  exit: {command: bye}\n',
      { b: { exitCode: 2 } },
      { runHooks: [hook] },
    );
    const r = await h.run();
    expect(r.status).toBe(RunStatus.Failed);
    expect(hook.events).toEqual([
      'setUp',
      'node a',
      'node b',
      'node onExit',
      'tearDown',
      `finished ${RunStatus.Failed}`,
    ]);
    expect(hook.ctx?.env.MODE).toBe('batch');
    expect(hook.ctx?.workingDir).toBe('/tmp');
    expect(hook.finished?.finishedAt).not.toBe('');
    expect(hook.nodes.find((n) => n.step.name === 'b')?.status).toBe(NodeStatus.Failed);
  });

  it("lets a hook replace the registry's executor for a step", async () => {
    const inside = new ScriptedExecutor({ b: { exitCode: 0, output: 'in container' } });
    const hook = recordingHook({ executor: inside });
    const h = harness(
      'steps:\n  - {name: a, command: x}\n  - {name: b, executor: {type: docker, config: {image: busybox}}, command: echo hi}\n',
      {},
      { runHooks: [hook] },
    );
    await h.run();
    expect(inside.calls.map((c) => c.step.name)).toEqual(['b']);
    expect(h.executor.calls.map((c) => c.step.name)).toEqual(['a']);
  });

  it('logs a failing hook and keeps the run outcome', async () => {
    const hook = recordingHook({ throwing: true });
    const h = harness('steps:\n  - {name: a, command: x}\n', {}, { runHooks: [hook] });
    const r = await h.run();
    expect(r.status).toBe(RunStatus.Succeeded);
    expect(h.recorder.lines.join('\n')).toContain('a run-finished hook failed: smtp down');
  });

  it("tells a node's hooks of its end only once its step logs are complete", async () => {
    const hook = recordingHook();
    const h = harness('steps:\n  - {name: a, command: x}\n', {}, { runHooks: [hook] });
    const open = h.recorder.openStepLogs.bind(h.recorder);
    h.recorder.openStepLogs = async (key) => {
      const logs = await open(key);
      const close = async (): Promise<void> => {
        await new Promise<void>((r) => setImmediate(r)); // a file still being flushed
        hook.events.push(`closed ${key}`);
        await logs.close();
      };
      return { ...logs, close };
    };
    await h.run();
    expect(hook.events).toContain('closed a');
    expect(hook.events.indexOf('closed a')).toBeLessThan(hook.events.indexOf('node a'));
  });

  it('tears down and ends the run when a node hook throws at once', async () => {
    const events: string[] = [];
    const hook: RunHook = {
      setUp: () =>
        Promise.resolve({
          nodeFinished: () => {
            throw new Error('no mail today');
          },
          tearDown: () => {
            events.push('tearDown');
            return Promise.resolve();
          },
        }),
    };
    const h = harness('steps:\n  - {name: a, command: x}\n', {}, { runHooks: [hook] });
    const r = await h.run();
    expect(r.status).toBe(RunStatus.Succeeded);
    expect(events).toEqual(['tearDown']);
    expect(h.recorder.lines.join('\n')).toContain('a node hook failed: no mail today');
  });

  it('sets up no hook in a dry run', async () => {
    const hook = recordingHook();
    const h = harness('steps:\n  - {name: a, command: x}\n', {}, { runHooks: [hook] });
    await h.run({ dryRun: true });
    expect(hook.events).toEqual([]);
  });
});
