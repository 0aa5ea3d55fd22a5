// Lays out the publishable `trellis` package in a folder, from a bundle already written to its
// `dist/` (scripts/lib/bundle-cli.mjs): the package.json, and every file the code reads by path
// at run time, each where the bundled code looks for it.
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * Shipped inside the tarball (`bundleDependencies`), so installing it needs no registry: jq-wasm
 * is loaded by path in a worker thread (packages/executors/src/jq/jq-pool.ts) and reads its
 * .wasm file beside itself, which a bundle cannot follow.
 */
const BUNDLED_PACKAGES = ['jq-wasm'];

/** jq-wasm's files that its CommonJS entry (`dist/index.cjs`) uses. */
const JQ_WASM_FILES = ['package.json', 'LICENSE', 'dist/index.cjs', 'dist/build'];

/**
 * @param {string} root the repository root
 * @param {string} dir the package folder; `dir/dist` holds the bundle
 * @returns {{ name: string, version: string }}
 */
export const stagePackage = (root, dir) => {
  const cli = JSON.parse(readFileSync(join(root, 'packages/cli/package.json'), 'utf8'));
  const rootPkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const webIndex = join(root, 'packages/web/dist/index.html');
  if (!existsSync(webIndex)) throw new Error(`${webIndex} is missing: run \`pnpm build\` first`);

  // packages/coordinator/src/proto/load-proto.ts looks for proto/coordinator.proto above itself.
  cpSync(join(root, 'proto'), join(dir, 'proto'), { recursive: true });
  // packages/store-pg/src/migrate/migrations.ts: the nearest migrations/ above itself.
  cpSync(join(root, 'packages/store-pg/migrations'), join(dir, 'migrations'), { recursive: true });
  // packages/cli/src/wiring/web-root.ts: `web/` beside the bundle's dist/.
  cpSync(join(root, 'packages/web/dist'), join(dir, 'web'), { recursive: true });

  const requireFromExecutors = createRequire(join(root, 'packages/executors/package.json'));
  /** @type {Record<string, string>} */
  const dependencies = {};
  for (const name of BUNDLED_PACKAGES) {
    const from = dirname(requireFromExecutors.resolve(`${name}/package.json`));
    const to = join(dir, 'node_modules', name);
    mkdirSync(to, { recursive: true });
    for (const f of JQ_WASM_FILES) cpSync(join(from, f), join(to, f), { recursive: true });
    dependencies[name] = JSON.parse(readFileSync(join(from, 'package.json'), 'utf8')).version;
  }

  const pkg = {
    name: 'trellis',
    version: cli.version,
    description: rootPkg.description,
    type: 'module',
    // packages/cli/src/version.ts reads the version from `../package.json` of the bundle.
    bin: { trellis: 'dist/trellis.js' },
    engines: rootPkg.engines,
    files: ['dist', 'proto', 'migrations', 'web'],
    dependencies,
    bundleDependencies: BUNDLED_PACKAGES,
  };
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  writeFileSync(
    join(dir, 'README.md'),
    [
      '# trellis',
      '',
      rootPkg.description,
      '',
      'Run `trellis --help` for the commands; `trellis start-all` serves the API, the web UI and',
      'the scheduler on http://127.0.0.1:8080 with its data under `$SVC_HOME` (default `~/.trellis`).',
      '',
    ].join('\n'),
  );
  return { name: pkg.name, version: pkg.version };
};
