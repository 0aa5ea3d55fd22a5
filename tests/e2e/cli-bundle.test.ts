import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Metafile } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleCli } from '../../scripts/lib/bundle-cli.mjs';
import { BIN, ROOT } from './support/start-all.js';

/*
 * What the bundled `trellis` parses before it answers (issue 21, item 1; docs/decisions.md
 * "Start-up: /health before the app"): the static import graph of the bundle that
 * scripts/package.mjs packs (of the built packages: run `tsc -b` first). `--help` and
 * `--version` are answered by the launcher, `trellis.js`, which loads nothing
 * (scripts/lib/cli-launcher.mjs); the CLI's entry chunk, `cli.js`, parses no heavy package;
 * `start-all` adds the config loader and serve.ts before it listens, and everything else after.
 */

let pkg: string;
let out: string;
let meta: Metafile;

beforeAll(async () => {
  // laid out as the packed package: the bundle in dist/, its package.json (the version) beside it
  pkg = mkdtempSync(join(tmpdir(), 'trellis-bundle-'));
  out = join(pkg, 'dist');
  mkdirSync(out);
  copyFileSync(join(ROOT, 'packages/cli/package.json'), join(pkg, 'package.json'));
  meta = await bundleCli(ROOT, out);
});

afterAll(() => rmSync(pkg, { recursive: true, force: true }));

/** The output file `name` or `name-<hash>.js` (a chunk of a dynamic import), as the metafile keys it. */
const output = (name: string): string => {
  const key = Object.keys(meta.outputs).find((k) => {
    const file = k.split('/').pop() ?? '';
    return file === name || new RegExp(`^${name}-[A-Z0-9]+\\.js$`).test(file);
  });
  if (key === undefined) throw new Error(`no output ${name} in ${out}`);
  return key;
};

/** The packages (and workspace folders) of every input the chunks statically reached load. */
const loadedBy = (...entries: string[]): Set<string> => {
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const i of meta.outputs[file]?.imports ?? [])
      if (i.kind === 'import-statement' && !i.external) visit(i.path);
  };
  for (const e of entries) visit(output(e));
  const packages = new Set<string>();
  for (const file of seen)
    for (const input of Object.keys(meta.outputs[file]?.inputs ?? {})) {
      const m = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(input);
      packages.add(m?.[1] ?? input.split('/').slice(0, 2).join('/'));
    }
  return packages;
};

describe('the bundled trellis', () => {
  it('parses no schema library, YAML parser or server for --help and --version', () => {
    const loaded = loadedBy('cli.js');
    expect(loaded.has('packages/cli')).toBe(true); // the probe sees the commands
    for (const heavy of ['zod', 'js-yaml', 'express', 'pg', 'prom-client'])
      expect(loaded.has(heavy), heavy).toBe(false);
  });

  it('listens with the config loaded and without Express, the runtime, metrics or pg', () => {
    const loaded = loadedBy('cli.js', 'config-loader', 'serve');
    expect(loaded.has('zod')).toBe(true); // the config, needed for the address
    for (const heavy of [
      'express',
      'prom-client',
      'pg',
      'openid-client',
      '@opentelemetry/api',
      'packages/engine',
      'packages/services',
    ])
      expect(loaded.has(heavy), heavy).toBe(false);
  });

  it('loads pg with the scheduler role only with the PostgreSQL store', () => {
    expect(loadedBy('serve-app').has('express')).toBe(true);
    expect(loadedBy('serve-app').has('pg')).toBe(false);
    expect(loadedBy('leader-lease').has('pg')).toBe(true);
  });
});

/** What `node <bin> ...argv` prints and its exit status. */
const runBin = (bin: string, argv: string[]) => {
  const r = spawnSync(process.execPath, [bin, ...argv], { encoding: 'utf8', env: {} });
  return { stdout: r.stdout, stderr: r.stderr, status: r.status };
};

describe("the bundle's files", () => {
  it('are ASCII: Node decodes them on its fast path, V8 holds them as one-byte strings', () => {
    const files = readdirSync(out).filter((f) => f.endsWith('.js'));
    expect(files.length).toBeGreaterThan(1);
    for (const f of files)
      expect(/[\u0080-\uffff]/.exec(readFileSync(join(out, f), 'utf8'))?.[0], f).toBeUndefined();
  });
});

describe('the bundled launcher, trellis.js', () => {
  it('imports nothing: its help and version are written into it', () => {
    expect(readFileSync(join(out, 'trellis.js'), 'utf8')).not.toMatch(/^\s*import\s/m);
  });

  it('answers help and version as the CLI does', () => {
    for (const argv of [[], ['--help'], ['-h'], ['help'], ['--version'], ['start-all', '--help']]) {
      const launched = runBin(join(out, 'trellis.js'), argv);
      expect(launched, argv.join(' ')).toEqual(runBin(BIN, argv));
      expect(launched.stdout + launched.stderr).not.toBe('');
    }
  });

  it('runs the CLI for any other arguments', () => {
    for (const argv of [['nosuch'], ['start-all', '--nosuch'], ['--help', 'extra']]) {
      const launched = runBin(join(out, 'trellis.js'), argv);
      expect(launched, argv.join(' ')).toEqual(runBin(BIN, argv));
    }
  });
});
