#!/usr/bin/env node
// `pnpm package [--out <dir>]`: builds what is stale, bundles the CLI, lays out the publishable
// `trellis` package in <dir>/package/ and packs it with `pnpm pack` into
// <dir>/trellis-<version>.tgz (<dir> defaults to dist/). Prints the tarball's path as its last
// line. `npm install -g <tgz>` then gives a `trellis` command that needs only Node
// (docs/operations.md).
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { bundleCli } from './lib/bundle-cli.mjs';
import { stagePackage } from './lib/stage-package.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { out: { type: 'string' } } });
const out = values.out ? resolve(values.out) : join(root, 'dist');
const stage = join(out, 'package');

/**
 * @param {string} cmd
 * @param {string[]} args
 * @param {string} cwd
 */
const run = (cmd, args, cwd) => {
  const r = spawnSync(cmd, args, { cwd, stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) {
    process.stderr.write(`package: \`${cmd} ${args.join(' ')}\` failed (${r.status})\n`);
    process.exit(r.status ?? 1);
  }
};

run(process.execPath, [join(root, 'scripts/ensure-built.mjs')], root);
rmSync(stage, { recursive: true, force: true });
mkdirSync(stage, { recursive: true });
await bundleCli(root, join(stage, 'dist'));
const { name, version } = stagePackage(root, stage);
const tgz = join(out, `${name}-${version}.tgz`);
rmSync(tgz, { force: true });
// --ignore-workspace: dist/package lies under the workspace root but is no member of it; a
// hoisted node_modules is what pnpm requires to pack bundleDependencies.
run(
  'pnpm',
  ['pack', '--ignore-workspace', '--config.node-linker=hoisted', '--pack-destination', out],
  stage,
);
process.stdout.write(`${tgz}\n`);
