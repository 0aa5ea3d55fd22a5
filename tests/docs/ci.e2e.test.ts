import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, ROOT, startAll, type StartAll } from '../e2e/support/start-all.js';

/**
 * docs/ci.md's shell examples, run as a CI job would run them: every ```sh ci block against a
 * real `trellis start-all` with a token, with a DAG that succeeds (exit 0) and one that fails
 * (exit 1). The GitHub Actions and GitLab CI files are checked as YAML.
 */

const doc = readFileSync(join(ROOT, 'docs', 'ci.md'), 'utf8');

/** The blocks fenced ```<lang> <kind>, in order. */
const blocks = (lang: string, kind: string): string[] =>
  [...doc.matchAll(new RegExp(`^\`\`\`${lang} ${kind}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map(
    (m) => m[1] ?? '',
  );

const TOKEN = 'docs-ci-token-0123456789';
let home: string;
let bin: string;
let server: StartAll;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'trellis-docs-ci-'));
  mkdirSync(join(home, 'dags'));
  writeFileSync(join(home, 'dags', 'ok.yaml'), 'steps:\n  - {name: greet, command: echo hi}\n');
  writeFileSync(
    join(home, 'dags', 'broken.yaml'),
    'steps:\n  - name: explode\n    command: sh -c \'echo "no luck" >&2; exit 3\'\n',
  );
  // `trellis` on the PATH, as a CI image would have it
  bin = join(home, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'trellis'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  chmodSync(join(bin, 'trellis'), 0o755);
  server = await startAll({
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    SVC_HOME: home,
    SVC_AUTH_TOKEN: TOKEN,
  });
});

afterAll(async () => {
  await server.stop();
  rmSync(home, { recursive: true, force: true });
});

/** Runs `script` with sh in the job's environment; its exit code and output. */
const runJob = (script: string, dag: string) =>
  new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const child = spawn('sh', ['-c', script], {
      cwd: home,
      env: {
        PATH: `${bin}:/usr/local/bin:/usr/bin:/bin`,
        HOME: home,
        TRELLIS_URL: server.url,
        SVC_API_TOKEN: TOKEN,
        DAG: dag,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });

describe('docs/ci.md', () => {
  const shell = blocks('sh', 'ci');

  it('has the curl and the CLI examples', () => {
    expect(shell.length).toBeGreaterThanOrEqual(3);
    expect(shell.some((s) => s.includes('waitFor=final') && s.includes('curl'))).toBe(true);
    expect(shell.some((s) => /trellis start "\$DAG" --server "\$TRELLIS_URL" --wait/.test(s))).toBe(
      true,
    );
  });

  it.each(shell.map((s, i) => [i + 1, s] as const))(
    'shell example %i exits 0 for a DAG that succeeds and 1 for one that fails',
    async (_n, script) => {
      const ok = await runJob(script, 'ok');
      expect(ok.code, ok.output).toBe(0);
      const bad = await runJob(script, 'broken');
      expect(bad.code, bad.output).toBe(1);
    },
  );

  it('has a GitHub Actions workflow that runs the CLI against the server', () => {
    const [text] = blocks('yaml', 'ci-github');
    const wf = load(text ?? '') as {
      on: unknown;
      jobs: Record<
        string,
        { 'runs-on': string; env: Record<string, string>; steps: { run?: string }[] }
      >;
    };
    expect(wf.on).toBeDefined();
    const job = Object.values(wf.jobs)[0];
    expect(job?.['runs-on']).toBe('ubuntu-latest');
    expect(Object.keys(job?.env ?? {})).toEqual(['TRELLIS_URL', 'SVC_API_TOKEN', 'DAG']);
    const run = job?.steps.map((s) => s.run ?? '').join('\n') ?? '';
    expect(run).toContain('start "$DAG" --server "$TRELLIS_URL" --follow --wait-timeout 1800');
  });

  it('has a GitLab CI job whose script is the curl example', () => {
    const [text] = blocks('yaml', 'ci-gitlab');
    const ci = load(text ?? '') as Record<string, { stage?: string; script?: string[] }>;
    const job = ci['trellis-deploy'];
    expect(job?.stage).toBe('deploy');
    const script = job?.script?.join('\n') ?? '';
    expect(script).toContain('waitFor=final&timeout=300');
    expect(script).toContain('--oauth2-bearer "$SVC_API_TOKEN"');
  });
});
