import { describe, expect, it } from 'vitest';
import { NodeStatus, RunStatus } from '@trellis/core';
import { EngineEvents, runDag, type Executor } from '@trellis/engine';
import {
  FakeClock,
  InMemoryRecorder,
  ScriptedCommandRunner,
  makeRunRecord,
} from '@trellis/testkit';
import { dagOf } from '../support/harness.js';

/** Starts a "process" at once (pid 4242) that ends after a timer, as a real one ends later. */
const startingExecutor: Executor = {
  run: (_ctx, onStart) => {
    onStart?.(4242);
    return new Promise((resolve) => setTimeout(() => resolve({ exitCode: 0, signal: null }), 1));
  },
};

const run = async (yaml: string, recorder: InMemoryRecorder, shell = startingExecutor) => {
  const dag = dagOf(yaml);
  return runDag(
    {
      clock: new FakeClock(undefined, { autoAdvance: true }),
      executors: { shell },
      commands: new ScriptedCommandRunner(),
      recorder,
      events: new EngineEvents(),
      systemEnv: { PATH: '/usr/bin:/bin', HOME: '/root' },
      defaultShell: 'sh',
    },
    { dag, record: makeRunRecord(dag) },
  );
};

describe('record saves of a step (issue 21: one save per event-loop turn)', () => {
  it('saves a step running once, with its process id, and then its end', async () => {
    const recorder = new InMemoryRecorder();
    const r = await run('steps:\n  - {name: a, command: x}\n', recorder);
    expect(r.status).toBe(RunStatus.Succeeded);
    const states = recorder.saves.map((s) => [s.nodes[0]?.status, s.nodes[0]?.pid]);
    expect(states).toContainEqual([NodeStatus.Running, 4242]);
    expect(states).not.toContainEqual([NodeStatus.Running, undefined]);
    expect(states[states.length - 1]).toEqual([NodeStatus.Succeeded, undefined]);
  });

  it('still saves every step running before its end, also with saves that take a turn', async () => {
    const recorder = new InMemoryRecorder({ slow: true });
    const steps = ['a', 'b', 'c'];
    const yaml = `steps:\n${steps.map((s, i) => `  - {name: ${s}, command: x${i > 0 ? `, depends: ${steps[i - 1]}` : ''}}`).join('\n')}\n`;
    // each "process" ends only once a save showed its step running: never, without such saves
    // (the test then times out); a timer here raced the save turn on a loaded machine
    const savedRunning = (name: string) =>
      recorder.saves.some((r) =>
        r.nodes.some((n) => n.step.name === name && n.status === NodeStatus.Running),
      );
    const endsOnceSaved: Executor = {
      run: async (ctx, onStart) => {
        onStart?.(4242);
        while (!savedRunning(ctx.step.name)) await new Promise((r) => setImmediate(r));
        return { exitCode: 0, signal: null };
      },
    };
    const r = await run(yaml, recorder, endsOnceSaved);
    expect(r.status).toBe(RunStatus.Succeeded);
    for (let i = 0; i < steps.length; i++)
      expect(recorder.saves.some((s) => s.nodes[i]?.status === NodeStatus.Running)).toBe(true);
  });
});
