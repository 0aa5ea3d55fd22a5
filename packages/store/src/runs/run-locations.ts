import { badRequest, notFound, type AppError } from '@trellis/core';
import type { DagRunRecord, RunRef } from '@trellis/spec';
import {
  isSafeDagName,
  isSafeRunId,
  sameRef,
  type RunLocation,
  type StoreLayout,
} from '../layout/store-layout.js';
import { storageRootOf } from './run-summary.js';

/** `not_found` for a run, or for a child run under its root. */
export const runNotFound = (ref: RunRef, root?: RunRef): AppError =>
  root === undefined || sameRef(root, ref)
    ? notFound('run', `${ref.name}/${ref.dagRunId}`)
    : notFound('child run', `${root.name}/${root.dagRunId}/${ref.dagRunId}`);

/**
 * Where a record is written (under its root for a child). A name or id that cannot be a folder
 * name is a `bad_request` that says what to use instead.
 */
export const locateForWrite = (layout: StoreLayout, record: DagRunRecord): RunLocation => {
  const root = storageRootOf(record);
  for (const r of root === undefined ? [record] : [record, root]) {
    if (!isSafeDagName(r.name))
      throw badRequest(`invalid DAG name ${JSON.stringify(r.name)}: it cannot be a folder name`);
    if (!isSafeRunId(r.dagRunId))
      throw badRequest(
        `invalid run id ${JSON.stringify(r.dagRunId)}: use letters, digits, "-" and "_" (max 64)`,
      );
  }
  return layout.locate(record, root);
};

/** Where a run is read from; a name or id that cannot exist is `not_found`. */
export const locateForRead = (layout: StoreLayout, ref: RunRef, root?: RunRef): RunLocation => {
  const refs = root === undefined ? [ref] : [ref, root];
  if (refs.some((r) => !isSafeDagName(r.name) || !isSafeRunId(r.dagRunId)))
    throw runNotFound(ref, root);
  return layout.locate(ref, root);
};
