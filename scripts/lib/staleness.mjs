// Whether the TypeScript build (`tsc -b`) and the web UI build (`vite build`) are older than
// their sources, from file times alone, so `pnpm start` skips a build that has nothing to do
// (scripts/ensure-built.mjs). Without a build output the answer is always "stale".
import { existsSync, readdirSync, readFileSync, statSync, utimesSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/** Files that every package's build reads besides its own sources. */
const SHARED_INPUTS = ['tsconfig.base.json', 'pnpm-lock.yaml'];

/**
 * A tsconfig `exclude` pattern (`src/**\/*.test.ts`, `src/testing/**`) as a RegExp on paths
 * relative to the package, with `/` separators.
 * @param {string} glob
 */
export const globToRegExp = (glob) => {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (glob.startsWith('**/', i)) {
      out += '(?:.*/)?';
      i += 2;
    } else if (glob.startsWith('**', i)) {
      out += '.*';
      i += 1;
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else out += /[.+^${}()|[\]\\]/.test(c) ? `\\${c}` : c;
  }
  return new RegExp(`^${out}$`);
};

/**
 * The newest modification time (ms) among the files under `dir` (recursively) for which `keep`
 * holds, given their path relative to `base`; 0 when there are none.
 * @param {string} dir
 * @param {string} base
 * @param {(rel: string) => boolean} keep
 * @returns {number}
 */
const newestUnder = (dir, base, keep) => {
  if (!existsSync(dir)) return 0;
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'node_modules' && e.name !== 'dist')
        newest = Math.max(newest, newestUnder(path, base, keep));
    } else if (keep(relative(base, path).split(sep).join('/'))) {
      newest = Math.max(newest, statSync(path).mtimeMs);
    }
  }
  return newest;
};

/** @param {string} file */
const mtimeOf = (file) => (existsSync(file) ? statSync(file).mtimeMs : 0);

/** @param {string[]} files */
const newestOf = (files) => Math.max(0, ...files.map(mtimeOf));

/**
 * The packages `tsc -b` builds: the `references` of the root tsconfig.json.
 * @param {string} root
 * @returns {string[]} package folders, relative to root
 */
const tscPackages = (root) => {
  const refs = /** @type {{ references?: { path: string }[] }} */ (
    JSON.parse(readFileSync(join(root, 'tsconfig.json'), 'utf8'))
  ).references;
  return (refs ?? []).map((r) => r.path.replace(/\/tsconfig\.build\.json$/, ''));
};

/**
 * Why the package at `pkgDir` needs `tsc -b`, or undefined when its `.tsbuildinfo` is newer
 * than every source file its tsconfig.build.json includes and the shared inputs.
 * @param {string} root
 * @param {string} pkgDir
 * @returns {string | undefined}
 */
const tscReason = (root, pkgDir) => {
  const dir = join(root, pkgDir);
  const config = JSON.parse(readFileSync(join(dir, 'tsconfig.build.json'), 'utf8'));
  const built = mtimeOf(buildInfoOf(root, pkgDir));
  if (built === 0) return `${pkgDir} is not built`;
  const excluded = /** @type {string[]} */ (config.exclude ?? []).map(globToRegExp);
  const keep = (/** @type {string} */ rel) =>
    /\.(ts|tsx|mts|cts|json)$/.test(rel) && !excluded.some((re) => re.test(rel));
  const inputs = Math.max(
    ...(config.include ?? ['src']).map((/** @type {string} */ inc) =>
      newestUnder(join(dir, inc), dir, keep),
    ),
    newestOf([join(dir, 'tsconfig.build.json'), join(dir, 'package.json')]),
    newestOf(SHARED_INPUTS.map((f) => join(root, f))),
  );
  return inputs > built ? `${pkgDir} has sources newer than its build` : undefined;
};

/** @param {string} root @param {string} pkgDir */
const buildInfoOf = (root, pkgDir) => {
  const config = JSON.parse(readFileSync(join(root, pkgDir, 'tsconfig.build.json'), 'utf8'));
  return join(root, pkgDir, config.compilerOptions?.tsBuildInfoFile ?? 'dist/.tsbuildinfo');
};

/**
 * After a successful `tsc -b` that started at `at`: every package's `.tsbuildinfo` older than
 * `at` gets `at` as its time (the build checked it against every source as of then).
 * @param {string} root
 * @param {Date} at
 */
export const markBuilt = (root, at) => {
  for (const pkg of tscPackages(root)) {
    const info = buildInfoOf(root, pkg);
    if (existsSync(info) && statSync(info).mtimeMs < at.getTime()) utimesSync(info, at, at);
  }
};

/**
 * What is stale under `root`: `tsc` and `web` each give the reason to rebuild, or undefined.
 * The web UI is bundled from packages/web and the TypeScript sources of @trellis/contract.
 * @param {string} root the repository root
 * @returns {{ tsc: string | undefined, web: string | undefined }}
 */
export const staleBuilds = (root) => {
  let tsc;
  for (const pkg of tscPackages(root)) {
    tsc = tscReason(root, pkg);
    if (tsc) break;
  }
  const web = join(root, 'packages/web');
  const built = mtimeOf(join(web, 'dist/index.html'));
  const notTest = (/** @type {string} */ rel) => !/\.test\.tsx?$/.test(rel);
  const inputs = Math.max(
    newestUnder(join(web, 'src'), web, notTest),
    newestUnder(join(root, 'packages/contract/src'), root, notTest),
    newestOf(['index.html', 'vite.config.ts', 'package.json'].map((f) => join(web, f))),
    newestOf(SHARED_INPUTS.map((f) => join(root, f))),
  );
  const webReason =
    built === 0
      ? 'packages/web is not built'
      : inputs > built
        ? 'packages/web has sources newer than its build'
        : undefined;
  return { tsc, web: webReason };
};
