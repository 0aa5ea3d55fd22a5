import { describe, expect, it } from 'vitest';
import { NodeStatus, RunStatus } from '@trellis/core';
import { harness } from '../support/harness.js';

const FULL = 'log file /logs/a.out could not be written: ENOSPC: no space left on device, write';

describe('step logs that could not be written (issue 15)', () => {
  it('fails the step with the error naming the log file and ENOSPC, although its command succeeded', async () => {
    const h = harness('steps:\n  - {name: a, command: x}\n  - {name: b, command: x, depends: a}\n');
    h.recorder.failStepLogs('a', FULL);
    const r = await h.run();
    const a = r.nodes[0];
    expect(a?.status).toBe(NodeStatus.Failed);
    expect(a?.error).toContain('/logs/a.out');
    expect(a?.error).toContain('ENOSPC');
    expect(r.status).toBe(RunStatus.Failed);
    expect(r.nodes[1]?.status).not.toBe(NodeStatus.Succeeded);
  });

  it('lets the run go on when the step says continueOn.failure: the run partially succeeds', async () => {
    const h = harness(
      'steps:\n  - {name: a, command: x, continueOn: {failure: true}}\n  - {name: b, command: x, depends: a}\n',
    );
    h.recorder.failStepLogs('a', FULL);
    const r = await h.run();
    expect(r.nodes[0]?.status).toBe(NodeStatus.Failed);
    expect(r.nodes[0]?.error).toContain('ENOSPC');
    expect(r.nodes[1]?.status).toBe(NodeStatus.Succeeded);
    expect(r.status).toBe(RunStatus.PartiallySucceeded);
  });

  it('does not count a step as failed twice when a later close of its logs reports the same failure', async () => {
    const h = harness('steps:\n  - {name: a, command: x}\n');
    h.recorder.failStepLogs('a', FULL);
    await h.run();
    expect(h.recorder.lines.filter((l) => l.includes('ENOSPC'))).toHaveLength(1);
  });
});

describe('the order of the end of a run (issue 15, durability)', () => {
  it('closes the step logs and the run log before the final status is saved', async () => {
    const h = harness('steps:\n  - {name: a, command: x}\n  - {name: b, command: x, depends: a}\n');
    await h.run();
    const j = h.recorder.journal;
    const finalSave = j.lastIndexOf(`save:${RunStatus.Succeeded}`);
    expect(j.indexOf(`save:${RunStatus.Succeeded}`)).toBe(finalSave); // saved final once
    expect(j.indexOf('stepLogs:close:a')).toBeLessThan(finalSave);
    expect(j.indexOf('stepLogs:close:b')).toBeLessThan(finalSave);
    expect(j.indexOf('close')).toBeGreaterThan(-1);
    expect(j.indexOf('close')).toBeLessThan(finalSave);
  });

  it('saves no final status before the logs are closed while an earlier save is still being written', async () => {
    // The last step's end starts a save that the store is still writing when the run ends: the
    // record it finally writes must not carry the final status yet (the logs are not closed).
    const h = harness(
      'steps:\n  - {name: a, command: x}\n  - {name: b, command: x, depends: a}\n',
      {},
      { slowRecorder: true },
    );
    await h.run();
    const j = h.recorder.journal;
    const finals = j.filter((e) => e === `save:${RunStatus.Succeeded}`);
    expect(finals).toHaveLength(1);
    expect(j.indexOf('close')).toBeLessThan(j.indexOf(`save:${RunStatus.Succeeded}`));
  });
});
