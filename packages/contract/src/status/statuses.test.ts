import { describe, expect, it } from 'vitest';
import * as core from '@trellis/core/status';
import { NodeStatus, RunStatus, nodeStatusLabel, runStatusLabel } from '../index.js';

describe('statuses of the contract', () => {
  it('are the ones core defines, labels included', () => {
    expect(RunStatus).toBe(core.RunStatus);
    expect(NodeStatus).toBe(core.NodeStatus);
    expect(runStatusLabel).toBe(core.runStatusLabel);
    expect(nodeStatusLabel).toBe(core.nodeStatusLabel);
  });
});
