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

const WINDOW_MS = 50;

const run = (yaml: string, recorder: InMemoryRecorder, clock: FakeClock, executor: Executor) => {
  const dag = dagOf(yaml);
  return runDag(
    {
      clock,
      executors: { shell: executor },
      commands: new ScriptedCommandRunner(),
      recorder,
      events: new EngineEvents(),
      systemEnv: { PATH: '/usr/bin:/bin', HOME: '/root' },
      defaultShell: 'sh',
      recordSaveWindowMs: WINDOW_MS,
    },
    { dag, record: makeRunRecord(dag) },
  );
};

/** A "process" that starts at once (pid 4242) and ends a turn later. */
const quick: Executor = {
  run: (_ctx, onStart) => {
    onStart?.(4242);
    return new Promise((resolve) => setImmediate(() => resolve({ exitCode: 0, signal: null })));
  },
};

const chain = (n: number): string =>
  `steps:\n${Array.from({ length: n }, (_, i) => `  - {name: s${i}, command: x}`).join('\n')}\n`;

describe('record save window (issue 21: per-step cost)', () => {
  it('saves the node changes of one window together, and the final status at once', async () => {
    const recorder = new InMemoryRecorder({ slow: true });
    // the clock stands still: the window after the first save never ends by itself
    const r = await run(chain(20), recorder, new FakeClock(), quick);
    expect(r.status).toBe(RunStatus.Succeeded);
    // the run's start, at most one save of node changes, and the final record
    expect(recorder.saves.length).toBeLessThanOrEqual(3);
    const last = recorder.last;
    expect(last?.status).toBe(RunStatus.Succeeded);
    expect(last?.nodes.every((n) => n.status === NodeStatus.Succeeded)).toBe(true);
    expect(last?.revision).toBe(r.revision);
  });

  it('writes a change no later than the window after the last save', async () => {
    const recorder = new InMemoryRecorder();
    const clock = new FakeClock();
    let end: () => void = () => undefined;
    const held: Executor = {
      run: (_ctx, onStart) =>
        new Promise((resolve) => {
          onStart?.(4242);
          end = () => resolve({ exitCode: 0, signal: null });
        }),
    };
    const done = run(chain(1), recorder, clock, held);
    const pidSaved = () => recorder.saves.some((s) => s.nodes[0]?.pid === 4242);
    // the step's running state and pid wait for the window that began with the run's start
    expect(await clock.nextSleep()).toBeLessThanOrEqual(WINDOW_MS);
    expect(pidSaved()).toBe(false);
    await clock.advanceBy(WINDOW_MS);
    expect(pidSaved()).toBe(true);
    end();
    expect((await done).status).toBe(RunStatus.Succeeded);
    expect(recorder.last?.nodes[0]?.status).toBe(NodeStatus.Succeeded);
  });
});
