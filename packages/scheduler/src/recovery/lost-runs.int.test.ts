import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { hostname } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { NodeStatus, RunStatus } from '@trellis/core';
import { newNodeRecord } from '@trellis/engine';
import { parseDagFile, type DagRunRecord, type RunOwner } from '@trellis/spec';
import { currentOwner, processStartTime } from '@trellis/store';
import { FakeClock, makeRunRecord } from '@trellis/testkit';
import { recoverLostRuns } from './lost-runs.js';

/**
 * Lost-run recovery and the process groups a lost run's steps left behind, with real processes:
 * a group is killed only when the run's owner was on this host, since a pid recorded on another
 * host names some other process here.
 */

const children: ChildProcess[] = [];

afterEach(async () => {
  for (const c of children.splice(0))
    if (c.exitCode === null && c.signalCode === null) {
      process.kill(-c.pid!, 'SIGKILL');
      await once(c, 'exit');
    }
});

/** A process group leader (`sleep`) started now, standing in for a step's process. */
const stepProcess = (): ChildProcess => {
  const c = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
  children.push(c);
  return c;
};

const runningRun = (owner: RunOwner, pid: number): DagRunRecord => {
  const parsed = parseDagFile('steps:\n  - name: s\n    command: sleep 30\n', {
    location: '/tmp/lost.yaml',
    cwd: '/tmp',
  });
  if (!parsed.valid) throw new Error(parsed.errors.join('\n'));
  const r = makeRunRecord(parsed.main.dag);
  r.status = RunStatus.Running;
  r.owner = owner;
  r.nodes = parsed.main.dag.steps.map((step) => ({
    ...newNodeRecord(step),
    status: NodeStatus.Running,
    startedAt: new Date(Date.now() - 1000).toISOString(),
    pid,
  }));
  return r;
};

const recover = async (run: DagRunRecord): Promise<DagRunRecord[]> => {
  const saved: DagRunRecord[] = [];
  await recoverLostRuns({
    store: {
      findOrphanedRuns: () => Promise.resolve([run]),
      saveRun: (r) => (saved.push(structuredClone(r)), Promise.resolve()),
    },
    clock: new FakeClock(),
    processes: { processStartTime },
  });
  return saved;
};

describe('recoverLostRuns', () => {
  it('fails a lost run of another host without killing the process that has its pid here', async () => {
    const bystander = stepProcess();
    const owner = { ...currentOwner(), host: `not-${hostname()}` };
    const saved = await recover(runningRun(owner, bystander.pid!));
    expect(saved.map((r) => r.status)).toEqual([RunStatus.Failed]);
    expect(saved[0]!.nodes[0]!.status).toBe(NodeStatus.Failed);
    expect(processStartTime(bystander.pid!)).toBeDefined(); // still running
  });

  it("kills the leftover process group of a lost run of this host's", async () => {
    const leftover = stepProcess();
    const exited = once(leftover, 'exit');
    const saved = await recover(runningRun({ ...currentOwner(), pid: 2 ** 22 + 9 }, leftover.pid!));
    expect(saved.map((r) => r.status)).toEqual([RunStatus.Failed]);
    const [, signal] = (await exited) as [number | null, NodeJS.Signals | null];
    expect(signal).toBe('SIGKILL');
  });
});
