import { z } from 'zod';

/**
 * Longest `{fileName}`: the file `<fileName>.yaml` must fit the 255-byte name limit of common file
 * systems (ext4, xfs, btrfs, tmpfs); the pattern allows ASCII only, so characters are bytes.
 */
export const FILE_NAME_MAX = 250;

/** `{fileName}`: `^[a-zA-Z0-9_-]+$` (spec: Endpoints), at most {@link FILE_NAME_MAX} characters. */
export const FileName = z
  .string()
  .max(
    FILE_NAME_MAX,
    `must be at most ${FILE_NAME_MAX} characters (the file <fileName>.yaml must fit the file system's 255-byte name limit)`,
  )
  .regex(/^[a-zA-Z0-9_-]+$/, 'must match ^[a-zA-Z0-9_-]+$ (letters, digits, "_" and "-")');

/** A DAG name: at most 40 characters of `[A-Za-z0-9_.-]` (spec: Errors, rule 2). */
export const DagName = z
  .string()
  .max(40, 'must be at most 40 characters')
  .regex(/^[A-Za-z0-9_.-]+$/, 'use letters, digits, "_", "." or "-"');

/** An integer query parameter, with a message naming the allowed range. */
export const queryInt = (min: number, max?: number) =>
  z.coerce
    .number({ error: 'must be an integer' })
    .int('must be an integer')
    .min(min, `must be at least ${min}`)
    .max(
      max ?? Number.MAX_SAFE_INTEGER,
      max === undefined ? 'is too large' : `must be at most ${max}`,
    );

/** `remoteNode` (default `local`), accepted on most endpoints. */
export const RemoteNodeQuery = z.object({ remoteNode: z.string().optional() });

/** Spec: Pagination object. */
export const Pagination = z.object({
  totalRecords: z.number().int(),
  currentPage: z.number().int(),
  totalPages: z.number().int(),
  nextPage: z.number().int().nullable(),
  prevPage: z.number().int().nullable(),
});
export type ApiPagination = z.infer<typeof Pagination>;

/** Error body (spec: Error object). */
export const ErrorBody = z.object({
  code: z.string(),
  message: z.string(),
  details: z.record(z.string(), z.unknown()).optional(),
});
export type ApiErrorBody = z.infer<typeof ErrorBody>;
