import { createHash } from 'node:crypto';

/** Longest kept prefix of a name, in characters, before the hash suffix is added. */
const MAX_PREFIX = 100;
const UNSAFE = /[^A-Za-z0-9_.-]/g;
/** A name that already ends like a hashed one (`x-0123abcd`) is hashed too, so it cannot collide. */
const LOOKS_HASHED = /-[0-9a-f]{8}$/;

/**
 * A file-name-safe form of a node or step name (the `<safeNodeName>` of step log files).
 * Characters outside `[A-Za-z0-9_.-]` become `_`; when anything was replaced or truncated (over
 * 100 characters), or the name is `''`, `.` or `..`, an 8-hex-digit sha256 suffix (`-1a2b3c4d`)
 * is added, so two different names never map to the same file.
 */
export const toSafeName = (name: string): string => {
  const replaced = name.replace(UNSAFE, '_');
  const prefix = replaced.slice(0, MAX_PREFIX);
  const needsHash =
    prefix !== name || name === '' || name === '.' || name === '..' || LOOKS_HASHED.test(name);
  if (!needsHash) return name;
  const hash = createHash('sha256').update(name, 'utf8').digest('hex').slice(0, 8);
  return `${prefix === '' ? '_' : prefix}-${hash}`;
};
