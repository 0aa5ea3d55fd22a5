import { open, readFile } from 'node:fs/promises';
import { AppError, ErrorCode } from '@trellis/core';
import type { DagRunRecord } from '@trellis/spec';
import { messageOf } from '../fs/fs-errors.js';
import { recordText, type RecordText } from './record-json.js';

/** `{"revision":N` at the start of a status file: the revision is readable from its first bytes. */
const REVISION_PREFIX = /^\{"revision":(\d+)[,}]/;
const PREFIX_BYTES = 40;

/**
 * The text of `status.json`: compact JSON with `revision` as the first key, so a save can check
 * the revision on disk by reading a few bytes instead of parsing the whole record.
 */
export const serializeRecord = (r: DagRunRecord): RecordText => recordText(r);

/** The error for a status file that exists but is not a run record. */
export const corruptRecord = (path: string, reason: string): AppError =>
  new AppError(ErrorCode.Internal, `run record ${path} is unreadable: ${reason}`, {
    path,
    reason,
  });

/** True when `v` has the fields every reader relies on. */
const isRecordShaped = (v: unknown): v is DagRunRecord => {
  if (typeof v !== 'object' || v === null) return false;
  const r = v as Record<string, unknown>;
  const root = r['root'] as Record<string, unknown> | undefined;
  return (
    typeof r['name'] === 'string' &&
    typeof r['dagRunId'] === 'string' &&
    typeof r['status'] === 'number' &&
    typeof r['revision'] === 'number' &&
    typeof r['createdAt'] === 'string' &&
    Array.isArray(r['nodes']) &&
    typeof root === 'object' &&
    root !== null &&
    typeof root['name'] === 'string' &&
    typeof root['dagRunId'] === 'string'
  );
};

/** Parses status file text; a corrupt file is an `internal_error` AppError naming the path. */
export const parseRecord = (path: string, text: string): DagRunRecord => {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw corruptRecord(path, messageOf(e));
  }
  if (!isRecordShaped(value)) throw corruptRecord(path, 'not a run record');
  return value;
};

/** Reads and parses a status file. Errors: the file system's (`ENOENT`), or a corrupt record. */
export const readRecordFile = async (path: string): Promise<DagRunRecord> =>
  parseRecord(path, await readFile(path, 'utf8'));

/**
 * The revision of the record on disk, read from the file's first bytes; falls back to a full
 * parse for a file written in another layout. A corrupt file counts as revision -1, so the next
 * save replaces it. Errors: the file system's (`ENOENT` when the run does not exist).
 */
export const readDiskRevision = async (path: string): Promise<number> => {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(PREFIX_BYTES);
    const { bytesRead } = await fh.read(buf, 0, PREFIX_BYTES, 0);
    const m = REVISION_PREFIX.exec(buf.toString('utf8', 0, bytesRead));
    if (m?.[1] !== undefined) return Number(m[1]);
    try {
      return parseRecord(path, await readFile(path, 'utf8')).revision;
    } catch {
      return -1;
    }
  } finally {
    await fh.close();
  }
};
