import { existsSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { AppError, ErrorCode, notFound } from '@trellis/core';
import { parseDagFile } from '@trellis/spec';
import type { DagCatalog, LoadedDag } from '@trellis/services';

export type { LoadedDag } from '@trellis/services';

/**
 * Finds and loads DAG files: a path (absolute, or relative to `baseDir`), or a name in the DAGs
 * folder (`.yaml` / `.yml` optional). A DAG with problems is refused with every problem listed.
 */
export class DagFileLoader implements DagCatalog {
  constructor(readonly dagsDir: string) {}

  /** The file `ref` names, or undefined. */
  locate(ref: string, baseDir?: string): string | undefined {
    const candidates = [
      ...(isAbsolute(ref) ? [ref] : baseDir ? [resolve(baseDir, ref)] : []),
      join(this.dagsDir, ref),
      join(this.dagsDir, `${ref}.yaml`),
      join(this.dagsDir, `${ref}.yml`),
    ];
    return candidates.find((p) => existsSync(p) && statSync(p).isFile());
  }

  /**
   * The DAG name `ref` means: the name in the file it names (also when the file now has
   * problems: its runs are still its runs), else `ref` itself (a DAG with runs but no file).
   */
  nameOf(ref: string, baseDir?: string): string {
    const location = this.locate(ref, baseDir);
    if (!location) return ref;
    return this.#parse(location).main.dag.name || ref;
  }

  /** Loads and validates the DAG `ref` names; throws not_found or bad_request (with the problems). */
  load(ref: string, baseDir?: string): LoadedDag {
    const location = this.locate(ref, baseDir);
    if (!location) throw notFound('dag', ref);
    const file = this.#parse(location);
    if (!file.valid) {
      throw new AppError(
        ErrorCode.BadRequest,
        `DAG ${location} has ${file.errors.length} problem(s):\n${file.errors.map((e) => `  ${e}`).join('\n')}`,
        { errors: [...file.errors] },
      );
    }
    return { dag: file.main.dag, localDags: file.localDags.map((d) => d.dag), location };
  }

  #parse(location: string): ReturnType<typeof parseDagFile> {
    return parseDagFile(readFileSync(location, 'utf8'), {
      location,
      dagExists: (target) => this.locate(target, resolve(location, '..')) !== undefined,
    });
  }
}
