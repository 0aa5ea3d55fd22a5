import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './start-all.js';

const run = promisify(execFile);

/** The `trellis` package packed by `pnpm package` and installed with npm into an empty prefix. */
export interface PackedInstall {
  /** The temp folder holding everything below (remove it when done). */
  readonly dir: string;
  readonly tarball: string;
  /** `<prefix>/bin/trellis`, the command npm linked. */
  readonly bin: string;
  /** The installed package's folder (`<prefix>/lib/node_modules/trellis`). */
  readonly pkgDir: string;
  /** A folder outside the repository to run it in. */
  readonly cwd: string;
  /** PATH with the prefix's bin/ and node, and nothing of the repository. */
  readonly PATH: string;
}

/**
 * Runs `scripts/package.mjs --out <temp>` (the repository's build must be current, as `pnpm
 * test` makes it), then `npm install -g --prefix <empty> --offline <tarball>` from a folder
 * outside the repository with a private HOME and npm cache: `--offline` fails the install if the
 * package needed anything from a registry.
 */
export const packAndInstall = async (): Promise<PackedInstall> => {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-e2e-packed-'));
  const { stdout } = await run(
    process.execPath,
    ['scripts/package.mjs', '--out', join(dir, 'pack')],
    {
      cwd: ROOT,
    },
  );
  const tarball = stdout.trim().split('\n').at(-1) ?? '';
  const prefix = join(dir, 'prefix');
  const cwd = join(dir, 'work');
  for (const d of [prefix, cwd, join(dir, 'home')]) mkdirSync(d);
  const nodeDir = dirname(process.execPath);
  await run(
    'npm',
    ['install', '-g', '--prefix', prefix, '--offline', '--no-audit', '--no-fund', tarball],
    {
      cwd,
      env: {
        PATH: `${nodeDir}:/usr/bin:/bin`,
        HOME: join(dir, 'home'),
        npm_config_cache: join(dir, 'npm-cache'),
        npm_config_update_notifier: 'false',
      },
    },
  );
  return {
    dir,
    tarball,
    bin: join(prefix, 'bin', 'trellis'),
    pkgDir: join(prefix, 'lib', 'node_modules', 'trellis'),
    cwd,
    PATH: `${join(prefix, 'bin')}:${nodeDir}:/usr/bin:/bin`,
  };
};
