import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BIN, callApi, startAll, type OtherBin, type StartAll } from '../e2e/support/start-all.js';
import { expectNothingLost, Ledger, untilAllFinal } from './support/ledger.js';

/**
 * Faults of the embedded server (`trellis start-all` on files): a kill -9 with runs queued behind
 * a running one, and a SIGTERM drain. After each, every accepted run is final, none ran twice.
 */

let home: string;
let ledger: Ledger;
let env: NodeJS.ProcessEnv;
const servers: StartAll[] = [];

const start = async (bin?: OtherBin): Promise<{ s: StartAll; base: string }> => {
  const s = await startAll(env, [], bin);
  servers.push(s);
  return { s, base: `${s.url}/api/v2` };
};

/**
 * The built `trellis` as a terminal runs it: leading its own session and process group, so a
 * signal to `-pid` reaches every process of that group, as a Ctrl-C does.
 */
const ownGroupBin = (): OtherBin => {
  const file = join(home, 'trellis-own-group.sh');
  writeFileSync(file, `#!/bin/sh\nexec setsid ${process.execPath} ${BIN} "$@"\n`, { mode: 0o755 });
  return { file, cwd: home };
};

const enqueue = async (base: string, n: number): Promise<string[]> => {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await callApi(base, 'POST', '/dags/ledger/enqueue', {});
    expect(r.status).toBe(200);
    ids.push(r.body.dagRunId as string);
  }
  return ids;
};

/** Starts the server again and awaits every run of `ids` final: none lost, none run twice. */
const restartUntilFinal = async (ids: string[], cause?: RegExp) => {
  const again = await start();
  const runs = await untilAllFinal(
    () => again.base,
    'ledger',
    ids,
    () => again.s.output(),
  );
  expectNothingLost(ledger, runs, cause);
  return runs;
};

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'trellis-faults-'));
  mkdirSync(join(home, 'dags'));
  ledger = new Ledger(home);
  env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, SVC_HOME: home };
  writeFileSync(
    join(home, 'dags', 'ledger.yaml'),
    ledger.dag({ gated: true, extra: ['maxActiveRuns: 1'] }),
  );
});

afterEach(async () => {
  ledger.release();
  ledger.dispose();
  for (const s of servers.splice(0)) {
    if (s.proc.exitCode === null && s.proc.signalCode === null) {
      s.proc.kill('SIGKILL');
      await once(s.proc, 'exit');
    }
  }
  rmSync(home, { recursive: true, force: true, maxRetries: 5 });
});

describe('faults of trellis start-all', { timeout: 90_000 }, () => {
  it('kill -9 with queued runs: the running run fails naming the dead process, the queued ones run once after a restart', async () => {
    const first = await start();
    const ids = await enqueue(first.base, 4);
    await ledger.untilLines(1);
    first.s.proc.kill('SIGKILL');
    await once(first.s.proc, 'exit');
    ledger.release();

    const runs = await restartUntilFinal(ids, /process that ran this run \(pid \d+ on .+\) died/);
    expect(runs[0]).toMatchObject({ dagRunId: ids[0], status: 2 });
    expect(runs.slice(1).map((r) => r.status)).toEqual([4, 4, 4]);
  });

  it('SIGTERM drains: the running run finishes, queued runs wait and run once after a restart', async () => {
    const first = await start();
    const ids = await enqueue(first.base, 3);
    await ledger.untilLines(1);
    const exited = once(first.s.proc, 'exit');
    first.s.proc.kill('SIGTERM');
    // Once it said so, no new run starts; the drain waits for the running one, then exits.
    await first.s.waitFor('received SIGTERM');
    ledger.release();
    const [code] = (await exited) as [number | null];
    expect(code).toBe(0);
    expect(ledger.lines()).toEqual([ids[0]]);

    const runs = await restartUntilFinal(ids);
    expect(runs.map((r) => r.status)).toEqual([4, 4, 4]);
  });

  it('Ctrl-C (SIGINT to its process group) drains like SIGTERM: the running step, started through the spawner, finishes', async () => {
    const first = await start(ownGroupBin());
    const pid = first.s.proc.pid as number;
    const ids = await enqueue(first.base, 2);
    await ledger.untilLines(1);
    const exited = once(first.s.proc, 'exit');
    process.kill(-pid, 'SIGINT'); // what a terminal's Ctrl-C does: the whole foreground group
    await first.s.waitFor('received SIGINT');
    ledger.release();
    const [code] = (await exited) as [number | null];
    expect(code).toBe(0);
    expect(ledger.lines()).toEqual([ids[0]]);

    const runs = await restartUntilFinal(ids);
    expect(runs.map((r) => r.status)).toEqual([4, 4]);
  });
});
