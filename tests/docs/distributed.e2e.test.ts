import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '@trellis/dispatch/testing';
import { BIN, ROOT } from '../e2e/support/start-all.js';

/**
 * docs/distributed.md's walk-through from two empty hosts to a TLS-secured, token-authenticated
 * fleet, run as written: every ```sh fleet-host-a / fleet-host-b block in order, in a shell on
 * its "host" (a folder of its own, also its HOME); a block fenced `-serve` keeps running and the
 * next starts once it printed that it is ready. The substitutions, and nothing else (the doc says
 * the same): `/etc/trellis` and `/var/lib/trellis` under the host's folder, `coord.internal` as
 * `localhost`, `coord.internal:/path` (an scp source) as the path under host A's folder with
 * `scp` a local copy, and free ports for 6379 (Redis), 50055 (gRPC) and 8080 (API).
 */

type Host = 'a' | 'b';
interface Block {
  readonly host: Host;
  readonly serve: boolean;
  readonly text: string;
}

const doc = readFileSync(join(ROOT, 'docs', 'distributed.md'), 'utf8');
const blocks: Block[] = [
  ...doc.matchAll(/^```sh fleet-host-(a|b)(-serve)?\n([\s\S]*?)^```$/gm),
].map((m) => ({ host: m[1] as Host, serve: m[2] !== undefined, text: m[3] ?? '' }));

/** What a long-running block prints once it serves (Redis, the coordinator, the worker). */
const READY = /Ready to accept connections|serving https?:\/\/|connected to the coordinator as/;

let root: string;
const hosts = { a: '', b: '' };
const ports: Record<string, number> = {};
const serving: { proc: ChildProcess; output: () => string }[] = [];
/** Output of each block that ran to its end, in order. */
const results: { code: number | null; output: string }[] = [];

const substitute = (text: string, host: Host): string =>
  text.replace(
    /coord\.internal:(\/\S+)|\/etc\/trellis|\/var\/lib\/trellis|coord\.internal|\b(6379|50055|8080)\b/g,
    (m, scpPath?: string, port?: string) => {
      if (scpPath) return join(hosts.a, scpPath);
      if (port) return String(ports[port]);
      if (m === 'coord.internal') return 'localhost';
      return join(hosts[host], m);
    },
  );

/** A host's `bin`: `trellis` (the repository's build) and, on host B, `scp` as a local copy. */
const makeBin = (host: Host): string => {
  const bin = join(hosts[host], 'usr-local-bin');
  mkdirSync(bin, { recursive: true });
  const tools: Record<string, string> = {
    trellis: `exec "${process.execPath}" "${BIN}" "$@"`,
    ...(host === 'b' ? { scp: 'exec cp "$@"' } : {}),
  };
  for (const [name, body] of Object.entries(tools)) {
    writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
  }
  return bin;
};

const shell = (b: Block): ChildProcess =>
  spawn('sh', ['-c', substitute(b.text, b.host)], {
    cwd: hosts[b.host],
    env: {
      PATH: `${join(hosts[b.host], 'usr-local-bin')}:/usr/local/bin:/usr/bin:/bin`,
      HOME: hosts[b.host],
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: b.serve, // its own process group, stopped as a whole
  });

const collect = (p: ChildProcess): (() => string) => {
  let out = '';
  p.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  p.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  return () => out;
};

/** Starts a `-serve` block and resolves once it is ready; rejects with its output if it ends. */
const serve = (b: Block): Promise<void> => {
  const proc = shell(b);
  const output = collect(proc);
  serving.push({ proc, output });
  return new Promise((resolve, reject) => {
    const check = (): void => {
      if (READY.test(output())) resolve();
    };
    proc.stdout?.on('data', check);
    proc.stderr?.on('data', check);
    proc.once('exit', (code) => reject(new Error(`ended (${String(code)}):\n${output()}`)));
  });
};

const run = async (b: Block): Promise<void> => {
  const proc = shell(b);
  const output = collect(proc);
  const [code] = (await once(proc, 'close')) as [number | null];
  results.push({ code, output: output() });
  expect(code, `${b.text}\n---\n${output()}`).toBe(0);
};

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'trellis-docs-fleet-'));
  for (const h of ['a', 'b'] as const) {
    hosts[h] = join(root, `host-${h}`);
    mkdirSync(hosts[h]);
    makeBin(h);
  }
  for (const p of ['6379', '50055', '8080']) ports[p] = await freePort();
});

afterAll(async () => {
  // the worker first, then the coordinator, then Redis: each stops gracefully on SIGTERM
  for (const s of serving.reverse()) {
    if (s.proc.exitCode !== null || s.proc.pid === undefined) continue;
    const closed = once(s.proc, 'close');
    process.kill(-s.proc.pid, 'SIGTERM');
    await closed;
  }
  rmSync(root, { recursive: true, force: true });
}, 180_000);

describe('docs/distributed.md, two empty hosts to a secured fleet', () => {
  it('has the blocks of both hosts: Redis, coordinator and worker kept running', () => {
    expect(
      blocks.filter((b) => b.serve).map((b) => `${b.host}:${b.text.split('\n').at(-2)}`),
    ).toEqual([
      expect.stringMatching(/^a:.*--dir \/var\/lib\/trellis\/redis$/),
      'a:trellis start-all --host 0.0.0.0 --port 8080',
      expect.stringMatching(/^b:trellis worker --coordinator coord\.internal:50055 --id gpu-1/),
    ]);
    expect(blocks.filter((b) => b.host === 'b' && !b.serve)).toHaveLength(1);
  });

  it("gives Redis users exactly docs/security.md's rights (one source of the rules)", () => {
    const rights = (text: string): string[] =>
      [...text.matchAll(/ACL SETUSER \S+ on (?:'[^']*'|"[^"]*") resetkeys \S+ (.*)$/gm)].map(
        (m) => m[1] ?? '',
      );
    const ours = rights(blocks.map((b) => b.text).join('\n'));
    const theirs = new Set(rights(readFileSync(join(ROOT, 'docs', 'security.md'), 'utf8')));
    expect(ours).toHaveLength(2);
    expect(theirs.size).toBe(1);
    for (const r of ours) expect(theirs.has(r), r).toBe(true);
  });

  it('runs every block: the worker joins over mutual TLS with its token and runs the DAG', async () => {
    for (const b of blocks) await (b.serve ? serve(b) : run(b));
    const [, coordinator, worker] = serving.map((s) => s.output());
    expect(coordinator).toContain('mutual TLS, 1 worker token(s)');
    expect(coordinator).toMatch(/serving https:\/\/\S+\/api\/v2/);
    // step 8: GET /workers over HTTPS lists the worker; step 9: the run succeeded, on it
    const listed = results.find((r) => r.output.includes('"workers"'));
    expect(JSON.parse(listed?.output ?? '{}')).toMatchObject({
      workers: [{ id: 'gpu-1', state: 'active' }],
    });
    const runId = /running run (\S+)/.exec(worker ?? '')?.[1];
    expect(runId).toBeDefined();
    expect(results.find((r) => r.output.includes(`run ${runId ?? '?'}`))).toBeDefined();
    // the lifecycle commands, last: cordon, uncordon, then drain, and the worker exits with 0
    expect(results.at(-1)?.output).toMatch(/is cordoned[\s\S]*is draining/);
    const workerProc = serving[2]!.proc;
    const [code] = (
      workerProc.exitCode !== null ? [workerProc.exitCode] : await once(workerProc, 'exit')
    ) as [number | null];
    expect(code).toBe(0);
    // host B never held a private key but its own
    const files = readdirSync(hosts.b, { recursive: true, encoding: 'utf8' });
    expect(files.filter((f) => f.endsWith('key.pem'))).toEqual([
      join('etc', 'trellis', 'tls', 'worker-gpu-1-key.pem'),
    ]);
  }, 600_000);
});
