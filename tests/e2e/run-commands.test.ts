import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const bin = join(root, 'packages', 'cli', 'bin', 'trellis.js');
let home: string;
const env = (): Record<string, string> => ({
  PATH: '/usr/local/bin:/usr/bin:/bin',
  HOME: home,
  SVC_HOME: home,
});

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'trellis-e2e-run-'));
  mkdirSync(join(home, 'dags'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

const dag = (name: string, yaml: string): void =>
  writeFileSync(join(home, 'dags', `${name}.yaml`), yaml);
const trellis = (...args: string[]) =>
  spawnSync(process.execPath, [bin, ...args], { cwd: home, encoding: 'utf8', env: env() });

/** Starts `trellis` in the background and resolves once its stdout shows `marker`. */
const background = async (
  marker: RegExp,
  ...args: string[]
): Promise<{ child: ChildProcess; out: () => string }> => {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: home,
    env: env(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.setEncoding('utf8');
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (c: string) => {
      out += c;
      if (marker.test(out)) resolve();
    });
    child.once('exit', () =>
      reject(new Error(`trellis exited before printing ${String(marker)}:\n${out}`)),
    );
  });
  return { child, out: () => out };
};

const processAlive = (pattern: string): boolean => spawnSync('pgrep', ['-f', pattern]).status === 0;

/** Waits (bounded) until a process matching `pattern` exists: nothing outside it can signal that. */
const processAppears = async (pattern: string): Promise<void> => {
  for (let i = 0; i < 250 && !processAlive(pattern); i++)
    await new Promise((r) => setTimeout(r, 20));
};

describe('trellis start, status, retry and dry', () => {
  it('runs a DAG in the foreground, printing progress, and exits 0 when it finished', () => {
    dag('hello', 'steps:\n  - name: greet\n    command: echo hi\n');
    const r = trellis('start', 'hello');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^run \S+ of DAG "hello" started$/m);
    expect(r.stdout).toMatch(/^ {2}ok {3}greet finished/m);
    expect(r.stdout).toMatch(/^run \S+ of DAG "hello": finished$/m);
  });

  it('exits 1 for a failed run, and retry runs only what did not succeed', () => {
    dag(
      'flaky',
      `steps:\n  - {name: first, command: "true"}\n  - {name: gate, command: "test -f ${join(home, 'ok')}"}\n`,
    );
    const first = trellis('start', 'flaky', '--run-id', 'r1');
    expect(first.status).toBe(1);
    expect(first.stdout).toMatch(/gate failed .*: exit status 1/);
    writeFileSync(join(home, 'ok'), '');
    const retry = trellis('retry', 'flaky', '--run-id', 'r1', '--new-run-id', 'r2');
    expect(retry.status).toBe(0);
    expect(retry.stdout).not.toMatch(/first started/);
    expect(retry.stdout).toMatch(/gate finished/);
  });

  it('passes params after -- by name and position', () => {
    dag('params', 'params: "pos NAME=x"\nsteps:\n  - {name: show, command: "echo ${NAME}-$1"}\n');
    expect(
      trellis('start', 'params', '--run-id', 'p1', '--', 'NAME=from cli', 'first').status,
    ).toBe(0);
    // --json prints the API's run details: params as JSON object text
    const status = JSON.parse(trellis('status', 'params', '--json').stdout) as { params: string };
    expect(JSON.parse(status.params)).toEqual({ 1: 'first', NAME: 'from cli' });
  });

  it('shows the latest run as a table and as JSON', () => {
    dag('hello', 'steps:\n  - name: greet\n    command: echo hi\n');
    trellis('start', 'hello', '--run-id', 'abc');
    const table = trellis('status', 'hello');
    expect(table.status).toBe(0);
    expect(table.stdout).toMatch(/^run {7}abc \(finished\)$/m);
    expect(table.stdout).toMatch(/^greet +finished/m);
    const json = JSON.parse(trellis('status', 'hello', '--json').stdout) as {
      dagRunId: string;
      status: number;
    };
    expect(json).toMatchObject({ dagRunId: 'abc', status: 4 });
  });

  it('dry-runs without executing anything or storing a run', () => {
    const marker = join(home, 'touched');
    dag('dry', `steps:\n  - {name: t, command: "touch ${marker}"}\n`);
    const r = trellis('dry', 'dry');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(
      `[dry run] would run (shell, in ${join(home, 'dags')}): touch ${marker}`,
    );
    expect(trellis('status', 'dry').status).toBe(1);
    expect(spawnSync('test', ['-e', marker]).status).toBe(1);
  });

  it("prints the failed step's error and the tail of its stderr, and status exits 1", () => {
    dag(
      'boom',
      'steps:\n  - name: explode\n    command: sh -c \'for i in $(seq 1 30); do echo "e$i" >&2; done; exit 3\'\n',
    );
    const r = trellis('start', 'boom', '--run-id', 'b1');
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/explode failed .*: exit status 3/);
    expect(r.stderr).toContain('step "explode" failed: exit status 3');
    const tail = r.stderr.split('\n').filter((l) => l.startsWith('  | '));
    expect(tail).toEqual(Array.from({ length: 20 }, (_, i) => `  | e${i + 11}`));
    const status = trellis('status', 'boom');
    expect(status.status).toBe(1);
    expect(status.stdout).toMatch(/^run {7}b1 \(failed\)$/m);
  });

  it('start --json prints only the run details with statusLabel on stdout', () => {
    dag('hello', 'steps:\n  - name: greet\n    command: echo hi\n');
    const r = trellis('start', 'hello', '--run-id', 'j1', '--json');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      dagRunId: 'j1',
      status: 4,
      statusLabel: 'finished',
      nodes: [{ statusLabel: 'finished' }],
    });
    expect(r.stderr).toMatch(/greet finished/);
  });

  it('refuses an invalid DAG with its problems and exit 1', () => {
    dag('bad', 'steps:\n  - {name: a, comand: x}\n');
    const r = trellis('start', 'bad');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('unknown field "comand"');
  });

  it('still shows the runs of a DAG whose file broke after it ran', () => {
    dag('was-fine', 'name: renamed-dag\nsteps:\n  - "true"\n');
    expect(trellis('start', 'was-fine', '--run-id', 'ok1').status).toBe(0);
    dag('was-fine', 'name: renamed-dag\nsteps:\n  - {name: a, comand: x}\n');
    const r = trellis('status', 'was-fine', '--json');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ name: 'renamed-dag', dagRunId: 'ok1', status: 4 });
  });
});

describe('trellis stop and signals', () => {
  it('stops a run running in another process; that process exits 3 with the run cancelled', async () => {
    dag('long', 'steps:\n  - {name: wait, command: "sleep 60"}\n');
    const { child, out } = await background(/wait started/, 'start', 'long', '--run-id', 'l1');
    const stop = trellis('stop', 'long');
    expect(stop.status).toBe(0);
    expect(stop.stdout).toBe('stop requested for run l1 of DAG "long"\n');
    const [code] = (await once(child, 'exit')) as [number];
    expect(code).toBe(3);
    expect(out()).toMatch(/run l1 of DAG "long": cancelled/);
  });

  it('stops the run on SIGTERM to the foreground process', async () => {
    dag('long', 'steps:\n  - {name: wait, command: "sleep 60"}\n');
    const { child, out } = await background(/wait started/, 'start', 'long', '--run-id', 'l2');
    child.kill('SIGTERM');
    const [code] = (await once(child, 'exit')) as [number];
    expect(code).toBe(3);
    expect(out()).toMatch(/: cancelled/);
  });

  it('keeps the record of a run whose process was killed -9 and marks it failed at the next start', async () => {
    // sh execs a lone command, so tag the process by a unique sleep duration
    const tag = `sleep 61.${process.pid}${Date.now() % 100000}`;
    dag('doomed', `steps:\n  - {name: wait, command: "${tag}"}\n`);
    const { child } = await background(/wait started/, 'start', 'doomed', '--run-id', 'd1');
    await processAppears(tag);
    // the step's process group is recorded right after it is spawned: wait for that save
    // (the stored record: the API shape that status --json prints has no pid)
    const statusFile = join(home, 'data', 'runs', 'doomed', 'd1', 'status.json');
    const pidSaved = (): boolean => {
      try {
        const rec = JSON.parse(readFileSync(statusFile, 'utf8')) as { nodes: { pid?: number }[] };
        return rec.nodes[0]?.pid !== undefined;
      } catch {
        return false; // not written yet
      }
    };
    for (let i = 0; i < 250 && !pidSaved(); i++) await new Promise((r) => setTimeout(r, 20));
    expect(pidSaved()).toBe(true);
    child.kill('SIGKILL');
    await once(child, 'exit');
    expect(processAlive(tag)).toBe(true); // the step's process group outlived its owner
    const status = trellis('status', 'doomed', '--json');
    expect(status.stderr).toMatch(
      /run d1 of DAG "doomed" was left running by a process that died; marked failed/,
    );
    const record = JSON.parse(status.stdout) as {
      status: number;
      error: string;
      nodes: { status: number; error: string }[];
    };
    expect(record.status).toBe(2);
    expect(record.error).toMatch(/died before it finished/);
    expect(record.nodes[0]?.status).toBe(2);
    expect(processAlive(tag)).toBe(false); // and its leftover process group was killed
  });

  it('a start that was only queued says so and exits 6, not 0', async () => {
    dag('solo', 'maxActiveRuns: 1\nsteps:\n  - {name: wait, command: "sleep 60"}\n');
    const { child } = await background(/wait started/, 'start', 'solo', '--run-id', 's1');
    const r = trellis('start', 'solo', '--run-id', 's2');
    expect(r.status).toBe(6);
    expect(r.stdout).toMatch(/run s2 of DAG "solo" is queued in queue "solo"/);
    expect(r.stdout).toMatch(/not waiting for it \(exit code 6\); pass --wait/);
    expect(trellis('dequeue', 'solo:s2').status).toBe(0);
    expect(trellis('stop', 'solo', '--run-id', 's1').status).toBe(0);
    expect((await once(child, 'exit'))[0]).toBe(3);
  });

  it('says when there is nothing to stop', () => {
    dag('idle', 'steps:\n  - "true"\n');
    const r = trellis('stop', 'idle');
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/has no running run/);
  });
});
