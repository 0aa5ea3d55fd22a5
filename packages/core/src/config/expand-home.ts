import path from 'node:path';

/**
 * Expands a leading `~` (alone or followed by `/`) to `userHome`. Other values, `~user` included,
 * are returned unchanged.
 */
export const expandHome = (value: string, userHome: string): string => {
  if (value === '~') return userHome;
  if (value.startsWith('~/')) return path.join(userHome, value.slice(2));
  return value;
};
