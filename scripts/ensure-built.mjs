#!/usr/bin/env node
// `pnpm start` and `pnpm package` run this instead of `pnpm build`: it builds only what is older
// than its sources (scripts/lib/staleness.mjs), so a warm start pays no compiler. A fresh clone
// has no build output, so everything is built.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { markBuilt, staleBuilds } from './lib/staleness.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** @param {string[]} args */
const pnpm = (args) => {
  const r = spawnSync('pnpm', args, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
};

const stale = staleBuilds(root);
if (stale.tsc) {
  process.stderr.write(`build: ${stale.tsc}: tsc -b\n`);
  const started = new Date();
  pnpm(['exec', 'tsc', '-b']);
  // tsc -b leaves a .tsbuildinfo alone when the newer file changed nothing it emits (a
  // package.json, a touched source): mark every build as current as of the start of this one,
  // or the check would find it stale forever.
  markBuilt(root, started);
}
if (stale.web) {
  process.stderr.write(`build: ${stale.web}: building the web UI\n`);
  pnpm(['build:web']);
}
