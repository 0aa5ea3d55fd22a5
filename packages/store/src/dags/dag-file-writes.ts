import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { link, open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';

/** Extensions of DAG files, in order of preference when both exist. */
export const DAG_FILE_EXTENSIONS = ['.yaml', '.yml'] as const;

/** The file name (without extension) of a directory entry that is a DAG file, else undefined. */
export const dagFileNameOf = (entry: string): string | undefined => {
  if (entry.startsWith('.')) return undefined; // temp files and editor swap files
  const ext = DAG_FILE_EXTENSIONS.find((e) => entry.endsWith(e));
  return ext && entry.length > ext.length ? entry.slice(0, -ext.length) : undefined;
};

/** Node's error code of a failed fs call, if any. */
export const errnoOf = (e: unknown): string | undefined =>
  typeof e === 'object' && e !== null && 'code' in e && typeof e.code === 'string'
    ? e.code
    : undefined;

/** The message of any thrown value. */
export const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));

const tempPathFor = (path: string): string =>
  join(dirname(path), `.tmp-${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}`);

/** Writes a complete temporary file next to `path` (fsynced), returning its path. */
const writeTemp = async (path: string, text: string): Promise<string> => {
  const temp = tempPathFor(path);
  const fh = await open(temp, 'wx');
  try {
    await fh.writeFile(text);
    await fh.sync();
  } catch (e) {
    await fh.close();
    await unlink(temp).catch(() => undefined);
    throw e;
  }
  await fh.close();
  return temp;
};

/**
 * Creates `path` with `text` atomically and never over an existing file: the text goes to a
 * fsynced temporary file that is then hard-linked to `path`. `link` fails with `EEXIST` when
 * `path` exists, so two creators racing for one name cannot overwrite each other, and a reader
 * never sees a half-written file. Errors are the file system's (`EEXIST` when taken).
 */
export const createFileAtomic = async (path: string, text: string): Promise<void> => {
  const temp = await writeTemp(path, text);
  try {
    await link(temp, path);
  } finally {
    await unlink(temp).catch(() => undefined);
  }
};

/** Replaces `path` with `text` atomically (temporary file, fsync, rename). */
export const replaceFileAtomic = async (path: string, text: string): Promise<void> => {
  const temp = await writeTemp(path, text);
  try {
    await rename(temp, path);
  } catch (e) {
    await unlink(temp).catch(() => undefined);
    throw e;
  }
};

/**
 * Moves `from` to `to` without ever replacing an existing `to` (a plain rename would): a hard link
 * then the removal of the old name. Errors: `EEXIST` when `to` exists, `ENOENT` when `from` is gone.
 */
export const moveFileNoReplace = async (from: string, to: string): Promise<void> => {
  await link(from, to);
  await unlink(from);
};

const isFileAt = (path: string): boolean => {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
};

/**
 * Whether the child DAG `ref` (a `run:` target) exists, resolved like DagFileLoader.locate resolves
 * it for a file in `dagsDir`: a path (absolute or relative to the folder), or a name with optional
 * `.yaml`/`.yml`. With `names` (the folder's file entries, just read), plain names are answered
 * from that set without touching the disk.
 */
export const childDagExists =
  (dagsDir: string, names?: ReadonlySet<string>) =>
  (ref: string): boolean => {
    const plain = !isAbsolute(ref) && !ref.includes('/') && !ref.includes('\\');
    if (plain && names) return [ref, `${ref}.yaml`, `${ref}.yml`].some((n) => names.has(n));
    const candidates = [
      ...(isAbsolute(ref) ? [ref] : [resolve(dagsDir, ref)]),
      join(dagsDir, `${ref}.yaml`),
      join(dagsDir, `${ref}.yml`),
    ];
    return candidates.some((p) => existsSync(p) && isFileAt(p));
  };
