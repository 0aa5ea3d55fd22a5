import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A script written for one execution; `remove` deletes it and never throws. */
export interface ScriptFile {
  readonly path: string;
  remove(): Promise<void>;
}

/**
 * Writes `script` to a new executable file (mode 0700) in `dir`, the step's working directory
 * (as the peer does), or in the OS temp directory when `dir` is not writable. Throws when
 * neither works; the caller turns that into a failed execution.
 */
export const writeScriptFile = async (script: string, dir: string): Promise<ScriptFile> => {
  const name = `trellis-script-${randomBytes(8).toString('hex')}`;
  let path = join(dir, name);
  try {
    await writeFile(path, script, { flag: 'wx', mode: 0o700 });
  } catch {
    path = join(tmpdir(), name);
    await writeFile(path, script, { flag: 'wx', mode: 0o700 });
  }
  return { path, remove: () => rm(path, { force: true }).catch(() => undefined) };
};
