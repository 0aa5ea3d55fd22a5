import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Metafile } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleCli } from '../../scripts/lib/bundle-cli.mjs';
import { ROOT } from './support/start-all.js';

/*
 * What the bundled `trellis` parses before it answers (issue 21, item 1; docs/decisions.md
 * "Start-up: /health before the app"): the static import graph of the bundle that
 * scripts/package.mjs packs (of the built packages: run `tsc -b` first). `--help` and
 * `--version` parse the entry chunk; `start-all` adds the config loader and serve.ts before it
 * listens, and everything else after.
 */

let out: string;
let meta: Metafile;

beforeAll(async () => {
  out = mkdtempSync(join(tmpdir(), 'trellis-bundle-'));
  meta = await bundleCli(ROOT, out);
});

afterAll(() => rmSync(out, { recursive: true, force: true }));

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
    const loaded = loadedBy('trellis.js');
    expect(loaded.has('packages/cli')).toBe(true); // the probe sees the commands
    for (const heavy of ['zod', 'js-yaml', 'express', 'pg', 'prom-client'])
      expect(loaded.has(heavy), heavy).toBe(false);
  });

  it('listens with the config loaded and without Express, the runtime, metrics or pg', () => {
    const loaded = loadedBy('trellis.js', 'config-loader', 'serve');
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
