import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package's `src/` folder, for child scripts that import the store's sources. */
export const STORE_SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../../../..', import.meta.url));
/** The test kit's `src/` folder, for child scripts that import its record makers. */
export const TESTKIT_SRC = join(REPO_ROOT, 'packages/testkit/src/');

/**
 * Starts a separate Node process running TypeScript `code` (an ES module; it may import files
 * under `STORE_SRC` or `TESTKIT_SRC` by absolute path). Workspace packages resolve to their sources, as in tests.
 * Test support only: not exported from the package entry.
 */
export const spawnTs = (dir: string, name: string, code: string): ChildProcess => {
  const script = join(dir, `${name}.mts`); // .mts: an ES module outside any package
  writeFileSync(script, code);
  return spawn(process.execPath, ['--conditions=@trellis/source', '--import', 'tsx', script], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
};

/** Resolves with the process's stdout when it exits with code 0; rejects otherwise. */
export const exitedOk = (child: ChildProcess): Promise<string> =>
  new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout?.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr?.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.once('exit', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`child exited with ${code}: ${err}`)),
    );
  });
