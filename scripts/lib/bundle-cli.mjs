// Bundles the `trellis` binary (packages/cli/bin/trellis.js, built by `tsc -b`) with esbuild
// into ES modules under `outDir`: `cli.js` and the chunks its dynamic imports load, so
// `start-all` or `worker` load their own chunks on demand, and no command pays Node's module
// resolution file by file. `trellis.js`, the binary, is a launcher that answers `--help` and
// `--version` without loading even `cli.js` (scripts/lib/cli-launcher.mjs).
import { build } from 'esbuild';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { CLI_ENTRY, writeLauncher } from './cli-launcher.mjs';

/**
 * Left out of the bundle (their `require` stays, inside the try/catch each package has around
 * it, and fails harmlessly at run time): optional native add-ons and optional drivers the
 * packed package does not ship. Each package falls back to plain JavaScript without them.
 */
export const EXTERNAL = [
  'cpu-features', // ssh2: CPU feature detection for its cipher order
  'msgpackr-extract', // msgpackr (bullmq): native string extraction
  'pg-native', // pg: libpq bindings, only with `pg.native`
  '@valkey/valkey-glide', // bullmq: an alternative Redis client
];

/**
 * zod's locales index (`z.locales`): the messages of some 60 languages, about 40 % of zod's
 * bundled source, parsed before `start-all` listens (the config is checked with zod). Trellis
 * never switches zod's language; zod's schemas import English from `locales/en.js` directly,
 * not through this index. In the bundle the index offers English only.
 */
const zodEnglishOnly = {
  name: 'zod-english-only',
  /** @param {import('esbuild').PluginBuild} b */
  setup(b) {
    b.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, (args) => ({
      contents: "export { default as en } from './en.js';",
      resolveDir: dirname(args.path),
    }));
  },
};

/**
 * Rewrites every non-ASCII character of the output `file` as a `\u` escape. esbuild already
 * escapes them in strings, regular expressions and names (`charset: 'ascii'`, its default) but
 * copies comments as they are: one em dash in a comment makes Node 20 decode the whole file on
 * its slow UTF-8 path and V8 hold and scan it as a two-byte string (zod's chunk, parsed before
 * `start-all` listens, has one). In a comment the escape is as good as the character.
 * @param {string} file
 */
const asciiOnly = (file) => {
  const text = readFileSync(file, 'utf8');
  if (!/[\u0080-\uffff]/.test(text)) return;
  // each UTF-16 unit alone (no `u` flag): an astral character becomes its surrogate pair
  const escape = (/** @type {string} */ u) => `\\u${u.charCodeAt(0).toString(16).padStart(4, '0')}`;
  writeFileSync(file, text.replace(/[\u0080-\uffff]/g, escape));
};

/*
 * CommonJS packages in an ES module bundle: esbuild's `require` shim needs a real `require` for
 * Node's built-ins, and some packages read `__dirname` or `__filename` (in error paths, or to
 * find optional files); each output file gets its own.
 */
const BANNER = [
  "import { createRequire as __trellisCreateRequire } from 'node:module';",
  "import { dirname as __trellisDirname } from 'node:path';",
  "import { fileURLToPath as __trellisFileURLToPath } from 'node:url';",
  'const require = __trellisCreateRequire(import.meta.url);',
  'const __filename = __trellisFileURLToPath(import.meta.url);',
  'const __dirname = __trellisDirname(__filename);',
].join('\n');

/**
 * @param {string} root the repository root
 * @param {string} outDir where the bundle goes (emptied first by the caller)
 * @returns {Promise<import('esbuild').Metafile>}
 */
export const bundleCli = async (root, outDir) => {
  const result = await build({
    absWorkingDir: root,
    entryPoints: { [CLI_ENTRY]: join(root, 'packages/cli/bin/trellis.js') },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outdir: outDir,
    chunkNames: '[name]-[hash]',
    external: EXTERNAL,
    banner: { js: BANNER },
    plugins: [zodEnglishOnly],
    metafile: true,
    logLevel: 'warning',
  });
  for (const file of Object.keys(result.metafile.outputs)) asciiOnly(join(root, file));
  await writeLauncher(root, outDir);
  return result.metafile;
};
