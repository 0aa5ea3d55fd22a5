import { mkdir, unlink } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { AppError, ErrorCode, alreadyExists, badRequest, notFound } from '@trellis/core';
import { dagNameProblem, formatProblem, parseDagFile, type Dag } from '@trellis/spec';
import type {
  DagDefinitions,
  DagDetails,
  DagListEntry,
  DagListQuery,
  DagRunSummary,
  DagSearchResult,
} from '@trellis/services';
import { nextRunAt, type CachedDagFile } from './parsed-dag-cache.js';
import {
  createFileAtomic,
  errnoOf,
  messageOf,
  moveFileNoReplace,
  replaceFileAtomic,
} from './dag-file-writes.js';
import { DagFolder, checkNewFileName } from './dag-folder.js';
import { compareListRows, matchesListFilter, type ListRow } from './dag-list-order.js';
import { compileSearchQuery, searchText } from './dag-search.js';
import type { FsDagStoreDeps } from './fs-dag-store-deps.js';
export type { FsDagStoreDeps, SuspendFlagsSource } from './fs-dag-store-deps.js';
import { SuspendFlags, type DagSuspendFlags } from './suspend-flags.js';

/** The file a new DAG gets without a spec (spec: POST /dags, "a minimal DAG with one echo step"). */
export const MINIMAL_DAG_SPEC = 'steps:\n  - name: hello\n    command: echo hello\n';

/** Default DAG name of a spec validated without a name (the peer's choice). */
const VALIDATED_DAG_NAME = 'validated-dag';
/** The problem of a validate request without a spec. */
const SPEC_REQUIRED = 'spec is required: send the DAG definition as YAML text in "spec"';

/**
 * DAG definitions stored as YAML files in one folder (spec: Endpoints, DAG definitions). Parsed
 * files are cached by path and stamp; unwatched, each list, search or tags call costs one
 * `readdir` and one `stat` per file, and parses only what changed; watched, they are answered from
 * memory between changes (docs/architecture.md, "DAG index").
 */
export class FsDagStore implements DagDefinitions {
  readonly #folder: DagFolder;
  readonly #flags: DagSuspendFlags;
  /** The folder's flags, made (and closed) here; undefined when the caller's flags are used. */
  readonly #ownFlags: SuspendFlags | undefined;

  constructor(private readonly deps: FsDagStoreDeps) {
    const opts = {
      watch: deps.watch ?? false,
      ...(deps.indexFile ? { indexFile: deps.indexFile } : {}),
    };
    this.#folder = new DagFolder(deps.dagsDir, deps.parse ?? parseDagFile, opts);
    if ('suspendDir' in deps) {
      this.#ownFlags = new SuspendFlags(deps.suspendDir, opts.watch);
      this.#flags = this.#ownFlags;
    } else {
      this.#ownFlags = undefined;
      this.#flags = deps.suspendFlags;
    }
  }

  /** Stops watching the folders. */
  close(): void {
    this.#folder.close();
    this.#ownFlags?.close();
  }

  async list(
    q: DagListQuery,
  ): Promise<{ entries: DagListEntry[]; errors: string[]; total: number }> {
    if (!Number.isInteger(q.page) || q.page < 1)
      throw badRequest(`page must be an integer of at least 1, got ${q.page}`);
    if (!Number.isInteger(q.perPage) || q.perPage < 1)
      throw badRequest(`perPage must be an integer of at least 1, got ${q.perPage}`);
    const { files, errors } = await this.#folder.scan();
    const now = this.deps.clock.now();
    const match = matchesListFilter(q);
    const rows = files
      .map((f) => ({ f, row: rowOf(f, q.sort === 'nextRun' ? nextRunAt(f, now) : undefined) }))
      .filter(({ row }) => match(row));
    const order = compareListRows(q);
    rows.sort((a, b) => order(a.row, b.row));
    const page = rows.slice((q.page - 1) * q.perPage, q.page * q.perPage);
    const suspended = this.#flags.names();
    const entries = await Promise.all(
      page.map(async ({ f }): Promise<DagListEntry> => {
        const dag = f.file.main.dag;
        const latestRun = await this.#latestRun(dag.name, errors);
        const nextRun = nextRunAt(f, now);
        return {
          fileName: f.fileName,
          dag,
          errors: [...f.errors],
          suspended: suspended.has(f.fileName),
          ...(latestRun ? { latestRun } : {}),
          ...(nextRun ? { nextRun } : {}),
        };
      }),
    );
    return { entries, errors, total: rows.length };
  }

  /**
   * Every valid DAG file that has a schedule (start, stop or restart), with its suspension flag
   * and the other DAGs of its file: what the cron scheduler reads at each tick (parse cache).
   */
  async scheduled(): Promise<
    { fileName: string; dag: Dag; localDags: Dag[]; suspended: boolean }[]
  > {
    const { files } = await this.#folder.scan();
    const suspended = this.#flags.names();
    return files
      .filter((f) => {
        const s = f.file.main.dag.schedule;
        return f.errors.length === 0 && s.start.length + s.stop.length + s.restart.length > 0;
      })
      .map((f) => ({
        fileName: f.fileName,
        dag: f.file.main.dag,
        localDags: f.file.localDags.map((d) => d.dag),
        suspended: suspended.has(f.fileName),
      }));
  }

  async create(fileName: string, spec?: string): Promise<void> {
    checkNewFileName(fileName);
    if (this.#folder.locate(fileName)) throw alreadyExists('dag', fileName);
    const path = this.#folder.pathFor(fileName);
    let text = MINIMAL_DAG_SPEC;
    // assumption: a blank `spec` counts as none, as the peer does (docs/decisions.md).
    if (spec !== undefined && spec.trim() !== '') {
      const problems = this.#folder.parseAs(path, fileName, spec).errors;
      if (problems.length > 0)
        throw badRequest(`the spec has ${problems.length} problem(s): ${problems.join('; ')}`, {
          errors: [...problems],
        });
      text = spec;
    }
    await mkdir(this.deps.dagsDir, { recursive: true });
    try {
      await createFileAtomic(path, text);
    } catch (e) {
      if (errnoOf(e) === 'EEXIST') throw alreadyExists('dag', fileName);
      throw e;
    }
  }

  async search(q: string): Promise<{ results: DagSearchResult[]; errors: string[] }> {
    const test = compileSearchQuery(q);
    const { files, errors } = await this.#folder.scan();
    const results = files.flatMap((f) => {
      // A plain text must be in the lower-cased file to be on one of its lines: most files end here.
      if (test.needle !== undefined && !f.lower.text.includes(test.needle)) return [];
      const matches = searchText(f.text, test);
      return matches.length > 0 ? [{ name: f.fileName, dag: f.file.main.dag, matches }] : [];
    });
    return { results, errors };
  }

  /**
   * Every tag once, sorted; a file with problems is named in `errors` with them (spec: GET
   * /dags/tags, "unreadable DAG files are reported in errors"), since its tags may be missing.
   */
  async tags(): Promise<{ tags: string[]; errors: string[] }> {
    const { files, errors } = await this.#folder.scan();
    const problems = files
      .filter((f) => f.errors.length > 0)
      .map((f) => `${basename(f.path)}: ${f.errors.join('; ')}`);
    return { tags: [...(await this.#folder.tags())], errors: [...errors, ...problems] };
  }

  validate(
    spec: string | undefined,
    name?: string,
  ): { valid: boolean; errors: string[]; dag?: Dag } {
    const errors: string[] = [];
    if (spec === undefined) errors.push(SPEC_REQUIRED);
    let defaultName = VALIDATED_DAG_NAME;
    if (name !== undefined && name !== '') {
      const problem = dagNameProblem(name);
      if (problem) errors.push(`name: ${problem}`);
      else defaultName = name;
    }
    if (spec === undefined) return { valid: false, errors };
    // Parsed as the file `<name>.yaml` in the DAGs folder would be: the spec's own `name:` wins,
    // else the given name; workingDir and child DAGs resolve as they will once stored.
    const file = this.#folder.parseAs(this.#folder.pathFor(defaultName), defaultName, spec).file;
    errors.push(...file.errors);
    return { valid: errors.length === 0, errors, dag: file.main.dag };
  }

  async get(fileName: string): Promise<DagDetails> {
    const f = await this.#folder.read(fileName);
    const dag = f.file.main.dag;
    const errors = [...f.errors];
    const latestRun = await this.#latestRun(dag.name, errors);
    const localDags = f.file.localDags
      .map((d) => ({ name: d.dag.name, dag: d.dag, errors: d.problems.map(formatProblem) }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return {
      fileName: f.fileName,
      dag,
      localDags,
      errors,
      suspended: this.#flags.has(f.fileName),
      ...(latestRun ? { latestRun } : {}),
    };
  }

  async delete(fileName: string): Promise<void> {
    const path = this.#folder.mustLocate(fileName);
    try {
      await unlink(path);
    } catch (e) {
      if (errnoOf(e) === 'ENOENT') throw notFound('dag', fileName);
      throw e;
    } finally {
      this.#folder.forget(path);
    }
    // assumption: run history stays, as the peer keeps it (docs/decisions.md).
    await this.#flags.set(fileName, false);
  }

  async getSpec(fileName: string): Promise<{ dag: Dag; spec: string; errors: string[] }> {
    const f = await this.#folder.read(fileName);
    return { dag: f.file.main.dag, spec: f.text, errors: [...f.errors] };
  }

  async putSpec(fileName: string, spec: string): Promise<{ errors: string[] }> {
    const path = this.#folder.mustLocate(fileName);
    // spec: Errors, rule 1 - problems are the answer, not an error; nothing is written then.
    const errors = [...this.#folder.parseAs(path, fileName, spec).errors];
    if (errors.length > 0) return { errors };
    await replaceFileAtomic(path, spec);
    this.#folder.forget(path);
    return { errors: [] };
  }

  async rename(fileName: string, newFileName: string): Promise<void> {
    const from = this.#folder.mustLocate(fileName);
    checkNewFileName(newFileName);
    if (this.#folder.locate(newFileName)) throw alreadyExists('dag', newFileName);
    const to = this.#folder.pathFor(newFileName, extname(from));
    try {
      await moveFileNoReplace(from, to);
    } catch (e) {
      if (errnoOf(e) === 'EEXIST') throw alreadyExists('dag', newFileName);
      if (errnoOf(e) === 'ENOENT') throw notFound('dag', fileName);
      throw e;
    } finally {
      this.#folder.forget(from);
    }
    await this.#flags.move(fileName, newFileName);
  }

  async setSuspended(fileName: string, suspended: boolean): Promise<void> {
    this.#folder.mustLocate(fileName);
    await this.#flags.set(fileName, suspended);
  }

  isSuspended(fileName: string): boolean {
    this.#folder.mustLocate(fileName);
    return this.#flags.has(fileName);
  }

  async load(fileName: string): Promise<{ dag: Dag; localDags: readonly Dag[]; location: string }> {
    const f = await this.#folder.read(fileName);
    if (!f.file.valid)
      throw new AppError(
        ErrorCode.BadRequest,
        `DAG ${f.path} has ${f.file.errors.length} problem(s):\n${f.file.errors.map((e) => `  ${e}`).join('\n')}`,
        { errors: [...f.file.errors] },
      );
    return {
      dag: f.file.main.dag,
      localDags: f.file.localDags.map((d) => d.dag),
      location: f.path,
    };
  }

  /** The latest run of a DAG; a failure to read it is reported in `errors`, not thrown. */
  async #latestRun(dagName: string, errors: string[]): Promise<DagRunSummary | undefined> {
    if (dagName === '') return undefined;
    try {
      return await this.deps.latestRun(dagName);
    } catch (e) {
      if (AppError.is(e) && e.code === ErrorCode.NotFound) return undefined;
      errors.push(`reading the latest run of ${dagName} failed: ${messageOf(e)}`);
      return undefined;
    }
  }
}

const rowOf = (f: CachedDagFile, nextRun: Date | undefined): ListRow => ({
  name: f.lower.name,
  fileName: f.lower.fileName,
  key: f.fileName,
  tags: f.lower.tags,
  nextRunMs: nextRun?.getTime(),
});
