import { AppError, ErrorCode, badRequest } from '@trellis/core';
import { parseDagFile } from '@trellis/spec';
import type { DagCatalog } from '../dags/dag-catalog-port.js';

/**
 * The DAG file of an inline run (POST /dag-runs: YAML text, stored nowhere). The name comes from
 * `name` or the spec and is required; a spec with problems is a bad_request listing them.
 */
export const parseInlineSpec = (
  spec: string,
  name: string | undefined,
  dags: Pick<DagCatalog, 'dagsDir' | 'locate'>,
): ReturnType<typeof parseDagFile> => {
  if (spec.trim() === '') throw badRequest('spec is required: send the DAG as YAML text in "spec"');
  const file = parseDagFile(spec, {
    ...(name !== undefined ? { name } : {}),
    cwd: dags.dagsDir,
    dagExists: (t) => dags.locate(t) !== undefined,
  });
  if (!file.main.dag.name)
    throw badRequest('the DAG needs a name: give "name" in the request or name: in the spec');
  if (!file.valid) {
    throw new AppError(
      ErrorCode.BadRequest,
      `the spec has ${file.errors.length} problem(s): ${file.errors.join('; ')}`,
      { errors: [...file.errors] },
    );
  }
  return file;
};
