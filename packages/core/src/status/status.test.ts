import { describe, expect, it } from 'vitest';
import {
  NodeStatus,
  isFinalNodeStatus,
  isSettableNodeStatus,
  nodeStatusLabel,
} from './node-status.js';
import { RunStatus, isFinalRunStatus, isRunStatus, runStatusLabel } from './run-status.js';

describe('run statuses', () => {
  it('use the spec values 0-6 with the labels of docs/decisions.md', () => {
    expect(RunStatus).toEqual({
      NotStarted: 0,
      Running: 1,
      Failed: 2,
      Cancelled: 3,
      Succeeded: 4,
      Queued: 5,
      PartiallySucceeded: 6,
    });
    expect(runStatusLabel).toEqual({
      0: 'not started',
      1: 'running',
      2: 'failed',
      3: 'cancelled',
      4: 'finished',
      5: 'queued',
      6: 'partial success',
    });
  });

  it('treat failed, cancelled, finished and partial success as final', () => {
    const final = Object.values(RunStatus).filter(isFinalRunStatus);
    expect(final.sort()).toEqual([2, 3, 4, 6]);
  });

  it('recognise only the integers 0-6 as statuses', () => {
    expect([0, 6].every(isRunStatus)).toBe(true);
    expect([-1, 7, 1.5, '1', null].some(isRunStatus)).toBe(false);
  });
});

describe('node statuses', () => {
  it('label 5 as skipped and share the run labels for 0-4', () => {
    expect(nodeStatusLabel[NodeStatus.Skipped]).toBe('skipped');
    for (const s of [0, 1, 2, 3, 4] as const) expect(nodeStatusLabel[s]).toBe(runStatusLabel[s]);
  });

  it('accept 0-5 in the step status update and nothing else', () => {
    expect([0, 1, 2, 3, 4, 5].every(isSettableNodeStatus)).toBe(true);
    expect([6, -1, 2.5, '3'].some(isSettableNodeStatus)).toBe(false);
  });

  it('treat a running or not-started node as not final', () => {
    expect(isFinalNodeStatus(NodeStatus.Running)).toBe(false);
    expect(isFinalNodeStatus(NodeStatus.NotStarted)).toBe(false);
    expect(isFinalNodeStatus(NodeStatus.Skipped)).toBe(true);
  });
});
