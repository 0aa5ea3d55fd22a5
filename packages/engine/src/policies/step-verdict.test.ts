import { describe, expect, it } from 'vitest';
import { NodeStatus } from '@trellis/core';
import type { ContinueOn } from '@trellis/spec';
import { stepVerdict } from './step-verdict.js';

const none: ContinueOn = {
  failure: false,
  skipped: false,
  exitCode: [],
  output: [],
  markSuccess: false,
};
const failed = { ok: false, partial: false, exitCode: 3, error: 'exit status 3' };

describe('stepVerdict', () => {
  it('succeeds, or partially succeeds, without continuing', () => {
    const ok = { ok: true, partial: false, exitCode: 0, error: '' };
    expect(stepVerdict(none, ok)).toEqual({
      status: NodeStatus.Succeeded,
      error: '',
      continues: false,
      failedButContinued: false,
    });
    expect(stepVerdict(none, { ...ok, partial: true }).status).toBe(NodeStatus.PartiallySucceeded);
  });

  it('fails and stops dependents without continueOn', () => {
    expect(stepVerdict(none, failed)).toEqual({
      status: NodeStatus.Failed,
      error: 'exit status 3',
      continues: false,
      failedButContinued: false,
    });
  });

  it('fails but lets dependents run when continueOn matches', () => {
    expect(stepVerdict({ ...none, exitCode: [3] }, failed)).toEqual({
      status: NodeStatus.Failed,
      error: 'exit status 3',
      continues: true,
      failedButContinued: true,
    });
  });

  it('is marked succeeded with markSuccess and keeps the error text', () => {
    expect(stepVerdict({ ...none, failure: true, markSuccess: true }, failed)).toEqual({
      status: NodeStatus.Succeeded,
      error: 'exit status 3',
      continues: true,
      failedButContinued: false,
    });
  });
});
