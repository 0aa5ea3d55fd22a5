import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LogChunkSchema } from '@trellis/contract';
import { NodeStatus, RunStatus } from '@trellis/core';
import { useRunRoutes } from '../support/run-routes-fixture.js';

/** Where run logs go and what the log endpoints say of them (issue 15, items 1 and 2). */
const t = useRunRoutes();
const { api, startAndFinish } = t;

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

/** A 1 MiB tmpfs on the harness's log folder, unmounted after the test. */
const fullDiskForLogs = (): string => {
  const logDir = join(t.h.home, 'logs');
  mkdirSync(logDir, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', logDir]);
  cleanups.push(() => execFileSync('umount', ['-l', logDir]));
  return logDir;
};

const TWO_MIB = 'head -c 2097152 /dev/zero | tr "\\\\0" x';

describe("a DAG's logDir", () => {
  it("puts a local run's logs under the DAG logDir, and the log endpoints find them", async () => {
    const home = mkdtempSync(join(tmpdir(), 'trellis-own-'));
    cleanups.push(() => rmSync(home, { recursive: true, force: true }));
    t.h.dag(
      'mine',
      `logDir: ${join(home, 'dag-logs')}\nsteps:\n  - {name: a, command: "echo in my own folder"}\n`,
    );
    const r = await startAndFinish('mine');
    expect(r.status).toBe(RunStatus.Succeeded);
    const runDir = join(home, 'dag-logs', 'mine', r.dagRunId);
    expect(r.log).toBe(join(runDir, 'run.log'));
    expect(existsSync(join(t.h.home, 'logs', 'mine', r.dagRunId))).toBe(false);
    const runLog = LogChunkSchema.parse(
      (await api().get(`/api/v2/dag-runs/mine/${r.dagRunId}/log`)).body,
    );
    expect(runLog.content).toContain('run finished');
    const step = await api().get(`/api/v2/dag-runs/mine/${r.dagRunId}/steps/a/log`);
    expect(LogChunkSchema.parse(step.body).content).toBe('in my own folder');
  });
});

describe('a step log on a full disk', () => {
  it('fails the step naming the log file and ENOSPC, the log endpoint says truncated, and a later run is whole once there is room', async () => {
    const logDir = fullDiskForLogs();
    t.h.dag('big', `steps:\n  - {name: a, command: '${TWO_MIB}'}\n`);
    const r = await startAndFinish('big');
    expect(r.status).toBe(RunStatus.Failed);
    const a = r.nodes[0];
    expect(a?.status).toBe(NodeStatus.Failed);
    expect(a?.error).toContain(a?.stdout);
    expect(a?.error).toContain('ENOSPC');

    const res = await api().get(`/api/v2/dag-runs/big/${r.dagRunId}/steps/a/log?head=1`);
    expect(res.status).toBe(200);
    const chunk = LogChunkSchema.parse(res.body);
    expect(chunk.truncated).toBe(true);
    expect(chunk.truncatedReason).toContain('ENOSPC');
    expect(t.h.store.writeErrors.counts().log).toBeGreaterThanOrEqual(1);

    // room again: the server is up, another run is recorded whole
    rmSync(join(logDir, 'big'), { recursive: true });
    t.h.dag('small', 'steps:\n  - {name: b, command: "echo fine"}\n');
    const s = await startAndFinish('small');
    expect(s.status).toBe(RunStatus.Succeeded);
    const ok = LogChunkSchema.parse(
      (await api().get(`/api/v2/dag-runs/small/${s.dagRunId}/steps/b/log`)).body,
    );
    expect(ok).toMatchObject({ content: 'fine' });
    expect(ok.truncated).toBeUndefined();
  });

  it('lets the run go on when the step says continueOn.failure: the run partially succeeds and its log says truncated', async () => {
    fullDiskForLogs();
    t.h.dag(
      'goes-on',
      `steps:\n  - {name: a, command: '${TWO_MIB}', continueOn: {failure: true}}\n  - {name: b, command: "true", depends: a}\n`,
    );
    const r = await startAndFinish('goes-on');
    expect(r.status).toBe(RunStatus.PartiallySucceeded);
    expect(r.nodes[1]?.status).toBe(NodeStatus.Succeeded);
    const chunk = LogChunkSchema.parse(
      (await api().get(`/api/v2/dag-runs/goes-on/${r.dagRunId}/steps/a/log?head=1`)).body,
    );
    expect(chunk.truncated).toBe(true);
  });
});
