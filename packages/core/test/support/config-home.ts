import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect } from 'vitest';
import { ConfigError } from '../../src/config/config-error.js';
import type { ConfigFlags } from '../../src/config/config-flags.js';
import { loadConfig, type LoadConfigOptions } from '../../src/config/load-config.js';

/** A temp folder per test holding a fake user home and SVC_HOME, for loadConfig tests. */
export interface ConfigHome {
  /** The current test's temp folder (also loadConfig's cwd in `load`). */
  readonly dir: () => string;
  /** The fake user's home (`~`). */
  readonly userHome: () => string;
  /** The SVC_HOME most tests use. */
  readonly svcHome: () => string;
  /** Writes `yaml` to `file` (by default $SVC_HOME/config.yaml) and returns its path. */
  readonly writeConfig: (yaml: string, file?: string) => Promise<string>;
  /** loadConfig with a hermetic HOME and SVC_HOME under the temp dir, and cwd = the temp dir. */
  readonly load: (
    env?: Record<string, string>,
    argv?: ConfigFlags,
    extra?: Partial<LoadConfigOptions>,
  ) => ReturnType<typeof loadConfig>;
}

/** Registers beforeEach/afterEach hooks in the calling test file; call at its top level. */
export const useConfigHome = (): ConfigHome => {
  let dir = '';
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'trellis-config-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const userHome = (): string => path.join(dir, 'user');
  const svcHome = (): string => path.join(dir, 'svc');
  return {
    dir: () => dir,
    userHome,
    svcHome,
    writeConfig: async (yaml, file = path.join(svcHome(), 'config.yaml')) => {
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, yaml);
      return file;
    },
    load: (env = {}, argv = {}, extra = {}) =>
      loadConfig({
        env: { HOME: userHome(), SVC_HOME: svcHome(), ...env },
        argv,
        cwd: dir,
        ...extra,
      }),
  };
};

/** The ConfigError `fn` throws (fails the test when it throws anything else or nothing). */
export const configErrorOf = (fn: () => unknown): ConfigError => {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return e as ConfigError;
  }
  throw new Error('expected a ConfigError, but nothing was thrown');
};
