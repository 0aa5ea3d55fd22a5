/*
 * Wire shapes of the REST API v2 as the UI reads them (docs/openapi.json, spec: Data shapes).
 * Hand-written rather than imported: the UI must build without the server's packages.
 */

export interface RunSummary {
  rootDAGRunName: string;
  rootDAGRunId: string;
  parentDAGRunName: string;
  parentDAGRunId: string;
  dagRunId: string;
  name: string;
  status: number;
  statusLabel: string;
  queuedAt: string;
  startedAt: string;
  finishedAt: string;
  log: string;
  params: string;
}

export interface ApiStep {
  name: string;
  id: string;
  description: string;
  command: string;
  cmdWithArgs: string;
  script: string;
  depends: string[];
  run: string;
  params: string;
  output: string;
}

export interface ChildRef {
  dagRunId: string;
  params: string;
  name: string;
  status: number;
  statusLabel: string;
}

export interface ApiNode {
  step: ApiStep;
  stdout: string;
  stderr: string;
  startedAt: string;
  finishedAt: string;
  status: number;
  statusLabel: string;
  retryCount: number;
  doneCount: number;
  children: ChildRef[];
  childrenRepeated: ChildRef[];
  error: string;
}

export interface RunDetails extends RunSummary {
  nodes: ApiNode[];
  onExit: ApiNode | null;
  onSuccess: ApiNode | null;
  onFailure: ApiNode | null;
  onCancel: ApiNode | null;
  error: string;
}

export interface DagSummary {
  name: string;
  group: string;
  schedule: { expression: string }[];
  description: string;
  params: string[];
  defaultParams: string;
  tags: string[];
}

export interface DagDetails extends DagSummary {
  steps: ApiStep[];
  type: string;
  queue: string;
  maxActiveRuns: number;
  runConfig: { disableParamEdit: boolean; disableRunIdEdit: boolean };
}

export interface DagListItem {
  fileName: string;
  dag: DagSummary;
  latestDAGRun: RunSummary;
  suspended: boolean;
  errors: string[];
  /** Next scheduled start (ISO), `''` without a schedule (beyond the spec). */
  nextRun?: string;
}

export interface Pagination {
  totalRecords: number;
  currentPage: number;
  totalPages: number;
  nextPage: number | null;
  prevPage: number | null;
}

export interface DagListResponse {
  dags: DagListItem[];
  errors: string[];
  pagination: Pagination;
}

export interface DagDetailsResponse {
  dag: DagDetails;
  latestDAGRun: RunSummary;
  suspended: boolean;
  errors: string[];
}

export interface GridItem {
  name: string;
  history: number[];
}

export interface DagRunsResponse {
  dagRuns: RunSummary[];
  gridData: GridItem[];
}

export interface LogChunk {
  content: string;
  lineCount: number;
  totalLines: number;
  hasMore: boolean;
  isEstimate: boolean;
}

export interface Queue {
  name: string;
  type: 'custom' | 'dag-based';
  maxConcurrency?: number;
  summary: { running: number; queued: number; total: number };
  runningDAGRuns: RunSummary[];
  queuedDAGRuns: RunSummary[];
}

export interface RunningTask {
  dagName: string;
  dagRunId: string;
  rootDagRunName: string;
  rootDagRunId: string;
  parentDagRunName: string;
  parentDagRunId: string;
  startedAt: string;
}

export interface Worker {
  id: string;
  labels: Record<string, string>;
  health_status: string;
  last_heartbeat: string;
  running_tasks: RunningTask[];
}

export interface Health {
  status: 'healthy' | 'unhealthy';
  version: string;
  uptime: number;
  timestamp: string;
  error?: string;
}

/** What the signed-in caller may do (GET <basePath>/auth/session). */
export interface Session {
  authenticated: boolean;
  name: string;
  role: string;
  permissions: string[];
  /** How the caller authenticated: none, basic, bearer or oidc. */
  via: string;
}
