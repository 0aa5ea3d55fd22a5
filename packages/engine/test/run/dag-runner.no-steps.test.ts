import { describe, expect, it } from 'vitest';
import { NodeStatus, RunStatus } from '@trellis/core';
import { harness } from '../support/harness.js';

// docs/decisions.md, "A DAG with no steps": valid, and its run succeeds at once.
describe('a DAG with no steps', () => {
  it('runs to success at once with no nodes', async () => {
    const h = harness('name: defaults\nenv:\n  - A: 1\n');
    const r = await h.run();
    expect(r.status).toBe(RunStatus.Succeeded);
    expect(r.nodes).toEqual([]);
    expect(r.error ?? '').toBe('');
    expect(r.finishedAt).not.toBe('');
    expect(h.executor.calls).toEqual([]);
  });

  it('runs its success and exit handlers', async () => {
    const h = harness(
      'steps: []\nhandlerOn:\n  success: {command: s}\n  failure: {command: f}\n  exit: {command: e}\n',
    );
    const r = await h.run();
    expect(r.status).toBe(RunStatus.Succeeded);
    expect(h.executor.calls.map((c) => c.step.name)).toEqual(['onSuccess', 'onExit']);
    expect(r.onExit?.status).toBe(NodeStatus.Succeeded);
  });
});
