/** The `code` of a Node.js system error (`ENOENT`, `EEXIST` ...), or undefined for anything else. */
export const errnoOf = (e: unknown): string | undefined =>
  typeof e === 'object' && e !== null && typeof (e as { code?: unknown }).code === 'string'
    ? (e as { code: string }).code
    : undefined;

/** True for "the file or directory is not there" (also a missing parent: `ENOTDIR`). */
export const isMissing = (e: unknown): boolean => {
  const code = errnoOf(e);
  return code === 'ENOENT' || code === 'ENOTDIR';
};

/** True for "the target exists" (a rename onto a non-empty directory reports `ENOTEMPTY`). */
export const isExisting = (e: unknown): boolean => {
  const code = errnoOf(e);
  return code === 'EEXIST' || code === 'ENOTEMPTY';
};

/** The message of an error, for sentences that report it. */
export const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));
