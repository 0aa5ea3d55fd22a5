import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, startAll, type StartAll } from './support/start-all.js';

/** `trellis start|enqueue|status --server` against a real `trellis start-all` with a token. */

const TOKEN = 'e2e-cli-token-0123456789';
let home: string;
let server: StartAll;

const baseEnv = (): Record<string, string> => ({
  PATH: '/usr/local/bin:/usr/bin:/bin',
  HOME: home,
  SVC_HOME: home,
});

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'trellis-e2e-cli-'));
  mkdirSync(join(home, 'dags'));
  const dag = (name: string, yaml: string): void =>
    writeFileSync(join(home, 'dags', `${name}.yaml`), yaml);
  dag('ok', 'steps:\n  - {name: greet, command: echo hi}\n');
  dag(
    'boom',
    'steps:\n  - name: explode\n    command: sh -c \'for i in $(seq 1 25); do echo "err $i" >&2; done; exit 3\'\n',
  );
  dag('long', 'steps:\n  - {name: wait, command: sleep 60}\n');
  dag(
    'lines',
    'steps:\n  - name: many\n    command: awk \'BEGIN { for (i = 1; i <= 100000; i++) print "line " i }\'\n',
  );
  server = await startAll({ ...baseEnv(), SVC_AUTH_TOKEN: TOKEN });
});

afterAll(async () => {
  await server.stop();
  rmSync(home, { recursive: true, force: true });
});

interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs the built `trellis` with `args` and the token in SVC_API_TOKEN (unless `env` says
 * otherwise); `onStdout` sees the output so far whenever more arrives.
 */
const trellis = (
  args: readonly string[],
  env: Record<string, string> = { SVC_API_TOKEN: TOKEN },
  onStdout?: (soFar: string) => void,
): Promise<Ran> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: home,
      env: { ...baseEnv(), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
      onStdout?.(stdout);
    });
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });

const api = (path: string, method = 'GET'): Promise<Response> =>
  fetch(`${server.url}/api/v2${path}`, { method, headers: { Authorization: `Bearer ${TOKEN}` } });

describe('trellis start --server: exit codes tell the result', () => {
  it('exits 0 for a run that finished', async () => {
    const r = await trellis(['start', 'ok', '--server', server.url, '--wait']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^run \S+ of DAG "ok" started on http:\/\/\S+\/api\/v2$/m);
    expect(r.stdout).toMatch(/^run \S+ of DAG "ok": finished$/m);
  });

  it("exits 1 for a failed run and prints the failed step's error and last 20 stderr lines", async () => {
    const r = await trellis(['start', 'boom', '--server', server.url, '--wait']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/: failed$/m);
    expect(r.stderr).toContain('step "explode" failed: exit status 3');
    const tail = r.stderr.split('\n').filter((l) => l.startsWith('  | '));
    expect(tail).toEqual(Array.from({ length: 20 }, (_, i) => `  | err ${i + 6}`));
  });

  it('exits 3 when another request stops the run', async () => {
    let seenStart: () => void = () => undefined;
    const started = new Promise<void>((resolve) => (seenStart = resolve));
    const ran = trellis(
      ['start', 'long', '--server', server.url, '--wait', '--run-id', 'cancel-me'],
      { SVC_API_TOKEN: TOKEN },
      (out) => {
        if (out.includes('started on')) seenStart();
      },
    );
    await started;
    expect((await api('/dag-runs/long/cancel-me/stop', 'POST')).status).toBe(200);
    const r = await ran;
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/^run cancel-me of DAG "long": cancelled$/m);
  });

  it('exits 4 when --wait-timeout passes first, and the run goes on', async () => {
    const r = await trellis([
      'start',
      'long',
      '--server',
      server.url,
      '--wait-timeout',
      '1',
      '--run-id',
      'slow-1',
    ]);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/run slow-1 of DAG "long" is still running after --wait-timeout 1s/);
    const body = (await (await api('/dag-runs/long/slow-1')).json()) as {
      dagRunDetails: { status: number };
    };
    expect(body.dagRunDetails.status).toBe(1);
    expect((await api('/dag-runs/long/slow-1/stop', 'POST')).status).toBe(200);
  });

  it('enqueue --wait waits for the queued run and exits 0 when it finished', async () => {
    const r = await trellis(['enqueue', 'ok', '--server', server.url, '--wait']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^run \S+ of DAG "ok": finished$/m);
  });
});

describe('trellis start --server --follow', () => {
  it("prints all 100,000 lines of a step in order, each prefixed by the step's name", async () => {
    const r = await trellis(['start', 'lines', '--server', server.url, '--follow']);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n').filter((l) => l.startsWith('many | '));
    expect(lines.length).toBe(100_000);
    const wrong = lines.findIndex((l, i) => l !== `many | line ${i + 1}`);
    expect(wrong).toBe(-1);
  });
});

describe('--json', () => {
  it('prints only the run details, as the API shapes them, on stdout', async () => {
    const r = await trellis(['start', 'ok', '--server', server.url, '--wait', '--json']);
    expect(r.code).toBe(0);
    const d = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(d).toMatchObject({ name: 'ok', status: 4, statusLabel: 'finished', params: '{}' });
    expect((d.nodes as { statusLabel: string }[])[0]?.statusLabel).toBe('finished');
    expect(r.stderr).toMatch(/: finished$/m);
  });

  it('status --json prints the latest run with statusLabel', async () => {
    const r = await trellis(['status', 'ok', '--server', server.url, '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ name: 'ok', statusLabel: 'finished' });
  });
});

describe('trellis status', () => {
  it('exits 1 for a failed run, from the server and from the local store', async () => {
    await trellis(['start', 'boom', '--server', server.url, '--wait', '--run-id', 'boom-s']);
    const remote = await trellis(['status', 'boom', '--server', server.url, '--run-id', 'boom-s']);
    expect(remote.code).toBe(1);
    expect(remote.stdout).toMatch(/^run {7}boom-s \(failed\)$/m);
    const local = await trellis(['status', 'boom', '--run-id', 'boom-s'], {});
    expect(local.code).toBe(1);
  });
});

describe('refusals and usage', () => {
  it('exits 5 and says how to pass a token when the server wants one', async () => {
    const r = await trellis(['start', 'ok', '--server', server.url], {});
    expect(r.code).toBe(5);
    expect(r.stderr).toMatch(/needs a token; pass --token <token> or set SVC_API_TOKEN/);
    const flag = await trellis(['status', 'ok', '--server', server.url, '--token', TOKEN], {});
    expect(flag.code).toBe(0);
  });

  it('exits 5 when the server cannot be reached', async () => {
    const r = await trellis(['start', 'ok', '--server', 'http://127.0.0.1:1', '--wait']);
    expect(r.code).toBe(5);
    expect(r.stderr).toMatch(/^trellis start: cannot reach the server at http:\/\/127\.0\.0\.1:1/);
  });

  it('exits 1 when the server has no such DAG', async () => {
    const r = await trellis(['start', 'nope', '--server', server.url]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^trellis start: the server refused: /);
  });

  it('answers an unknown flag with one line and the usage, never a stack', async () => {
    const r = await trellis(['start', 'ok', '--server', server.url, '--bogus']);
    expect(r.code).toBe(2);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe(
      "trellis start: Unknown option '--bogus' (run `trellis start --help` for every flag)",
    );
    expect(lines[1]).toMatch(/^usage: trellis start <dag> /);
    expect(lines).toHaveLength(2);
  });

  it('refuses a --wait-timeout that is not a number of seconds', async () => {
    const r = await trellis(['start', 'ok', '--server', server.url, '--wait-timeout', 'soon']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--wait-timeout "soon" is not a number of seconds/);
  });
});
