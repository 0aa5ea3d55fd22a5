import os from 'node:os';
import path from 'node:path';

/**
 * The home directory of the user a step or process runs as: `HOME` of the environment it gets
 * (when set and not empty), else the OS user's home.
 */
export const homeOf = (env: Readonly<Record<string, string | undefined>>): string => {
  const home = env.HOME;
  return home !== undefined && home !== '' ? home : os.homedir();
};

/**
 * Expands a leading `~` (alone or followed by `/`) to `userHome`. Other values, `~user` and a `~`
 * inside the value included, are returned unchanged (a shell would not expand those either).
 */
export const expandHome = (value: string, userHome: string): string => {
  if (value === '~') return userHome;
  if (value.startsWith('~/')) return path.join(userHome, value.slice(2));
  return value;
};
