import type { Dag, DagRunRecord } from '@trellis/spec';

/**
 * What the DAG list and details show of the latest run: a run without its nodes, handler nodes and
 * preconditions (the run index's summary). A full DagRunRecord is one too.
 */
export type DagRunSummary = Omit<
  DagRunRecord,
  'nodes' | 'onExit' | 'onSuccess' | 'onFailure' | 'onCancel' | 'preconditions'
>;

/** Sort keys of the DAG list (docs/decisions.md: `sort=name|nextRun`, `order=asc|desc`). */
export interface DagListQuery {
  /** 1-based. */
  readonly page: number;
  readonly perPage: number;
  /** Case-insensitive substring of the file name or DAG name. */
  readonly name?: string;
  /** Case-insensitive exact tag. */
  readonly tag?: string;
  readonly sort: 'name' | 'nextRun';
  readonly order: 'asc' | 'desc';
}

/** One DAG file as the list shows it. */
export interface DagListEntry {
  readonly fileName: string;
  /** The main DAG (possibly partial when the file has problems). */
  readonly dag: Dag;
  readonly errors: readonly string[];
  readonly suspended: boolean;
  /** The latest run of the DAG, when it ran. */
  readonly latestRun?: DagRunSummary;
  /** Next start time from its schedule, when it has one. */
  readonly nextRun?: Date;
}

/** One DAG file in full (GET /dags/{fileName}). */
export interface DagDetails {
  readonly fileName: string;
  readonly dag: Dag;
  readonly localDags: readonly {
    readonly name: string;
    readonly dag: Dag;
    readonly errors: readonly string[];
  }[];
  readonly errors: readonly string[];
  readonly suspended: boolean;
  readonly latestRun?: DagRunSummary;
}

/** A match of the DAG search (GET /dags/search). */
export interface DagSearchResult {
  readonly name: string;
  readonly dag: Dag;
  readonly matches: readonly {
    readonly line: string;
    readonly lineNumber: number;
    readonly startLine: number;
  }[];
}

/**
 * The DAG definitions use cases behind `/dags` (spec: Endpoints, DAG definitions). Refusals are
 * AppErrors: not_found, bad_request (bad name, invalid spec), already_exists.
 */
export interface DagDefinitions {
  list(q: DagListQuery): Promise<{ entries: DagListEntry[]; errors: string[]; total: number }>;
  /** Creates `<fileName>.yaml` from `spec` (validated first), or a minimal one-step DAG. */
  create(fileName: string, spec?: string): Promise<void>;
  search(q: string): Promise<{ results: DagSearchResult[]; errors: string[] }>;
  tags(): Promise<{ tags: string[]; errors: string[] }>;
  /**
   * Validates without persisting; `name` is used when the spec has none. An absent `spec` is a
   * problem in `errors` like any other (spec: POST /dags/validate always answers 200).
   */
  validate(
    spec: string | undefined,
    name?: string,
  ): { valid: boolean; errors: string[]; dag?: Dag };
  get(fileName: string): Promise<DagDetails>;
  delete(fileName: string): Promise<void>;
  getSpec(fileName: string): Promise<{ dag: Dag; spec: string; errors: string[] }>;
  /** Writes the spec only when it is valid; validation problems come back in `errors`. */
  putSpec(fileName: string, spec: string): Promise<{ errors: string[] }>;
  rename(fileName: string, newFileName: string): Promise<void>;
  setSuspended(fileName: string, suspended: boolean): Promise<void>;
  isSuspended(fileName: string): boolean;
  /** The DAG of a file, validated, for starting a run. */
  load(fileName: string): Promise<{ dag: Dag; localDags: readonly Dag[]; location: string }>;
}

/** A DAG loaded for running: the DAG, the other DAGs of its file, and where it came from. */
export interface LoadedDag {
  readonly dag: Dag;
  readonly localDags: readonly Dag[];
  readonly location: string;
}

/**
 * Finding and loading DAG files for runs (DagFileLoader in this package today): a path (absolute,
 * or relative to `baseDir`), or a name in the DAGs folder.
 */
export interface DagCatalog {
  readonly dagsDir: string;
  /** The file `ref` names, or undefined. */
  locate(ref: string, baseDir?: string): string | undefined;
  /** The DAG name `ref` means (the name in its file, else `ref`). */
  nameOf(ref: string, baseDir?: string): string;
  /** Loads and validates the DAG `ref` names; throws not_found or bad_request. */
  load(ref: string, baseDir?: string): LoadedDag;
}
