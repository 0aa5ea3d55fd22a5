/**
 * The run status of the peer's 1.16.x history (as the peer does): one JSON object per line of a
 * `.dat` file, capitalised keys, the last non-empty line the current state. Read leniently: keys
 * in any letter case, missing fields as empty.
 */
export interface LegacyNode {
  readonly step: Record<string, unknown>;
  /** The step's log (stdout and stderr together in 1.16). */
  readonly log: string;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly status: number;
  readonly retriedAt: string;
  readonly retryCount: number;
  readonly doneCount: number;
  readonly error: string;
  /** `NAME` -> value, from `OutputVariables` (`{"NAME": "NAME=value"}`). */
  readonly outputs: Record<string, string>;
}

export interface LegacyStatus {
  readonly requestId: string;
  readonly name: string;
  readonly status: number;
  readonly nodes: readonly LegacyNode[];
  readonly onExit?: LegacyNode;
  readonly onSuccess?: LegacyNode;
  readonly onFailure?: LegacyNode;
  readonly onCancel?: LegacyNode;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly log: string;
  readonly params: string;
  readonly paramsList: readonly string[];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `o[key]` with the key matched in any letter case (`RequestId`, `requestId`). */
const field = (o: Obj, key: string): unknown => {
  if (key in o) return o[key];
  const lower = key.toLowerCase();
  for (const [k, v] of Object.entries(o)) if (k.toLowerCase() === lower) return v;
  return undefined;
};
const str = (o: Obj, key: string): string => {
  const v = field(o, key);
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '';
};
const num = (o: Obj, key: string): number => {
  const v = field(o, key);
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
};

const toNode = (v: unknown): LegacyNode | undefined => {
  if (!isObj(v)) return undefined;
  const step = field(v, 'Step');
  const outputs: Record<string, string> = {};
  const ov = field(v, 'OutputVariables');
  if (isObj(ov)) {
    for (const [k, val] of Object.entries(ov)) {
      if (typeof val !== 'string') continue;
      outputs[k] = val.startsWith(`${k}=`) ? val.slice(k.length + 1) : val;
    }
  }
  return {
    step: isObj(step) ? step : {},
    log: str(v, 'Log'),
    startedAt: str(v, 'StartedAt'),
    finishedAt: str(v, 'FinishedAt'),
    status: num(v, 'Status'),
    retriedAt: str(v, 'RetriedAt'),
    retryCount: num(v, 'RetryCount'),
    doneCount: num(v, 'DoneCount'),
    error: str(v, 'Error'),
    outputs,
  };
};

/**
 * The current state of a `.dat` file: its last non-empty line. Returns a problem sentence for a
 * file whose last line is not a JSON object (a corrupt or truncated file).
 */
export const parseLegacyStatus = (text: string): LegacyStatus | { problem: string } => {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  const last = lines[lines.length - 1];
  if (last === undefined) return { problem: 'the file is empty' };
  let v: unknown;
  try {
    v = JSON.parse(last);
  } catch (e) {
    return { problem: `its last line is not JSON (${(e as Error).message})` };
  }
  if (!isObj(v)) return { problem: 'its last line is not a JSON object' };
  const nodes = field(v, 'Nodes');
  const handler = (k: string): { [key: string]: LegacyNode } => {
    const n = toNode(field(v, k));
    return n ? { [k.charAt(0).toLowerCase() + k.slice(1)]: n } : {};
  };
  const paramsList = field(v, 'ParamsList');
  return {
    requestId: str(v, 'RequestId'),
    name: str(v, 'Name'),
    status: num(v, 'Status'),
    nodes: Array.isArray(nodes) ? nodes.flatMap((n) => toNode(n) ?? []) : [],
    ...handler('OnExit'),
    ...handler('OnSuccess'),
    ...handler('OnFailure'),
    ...handler('OnCancel'),
    startedAt: str(v, 'StartedAt'),
    finishedAt: str(v, 'FinishedAt'),
    log: str(v, 'Log'),
    params: str(v, 'Params'),
    paramsList: Array.isArray(paramsList)
      ? paramsList.filter((p): p is string => typeof p === 'string')
      : [],
  };
};

const LOCAL = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(\.\d+)?$/;

/**
 * A 1.16 timestamp as ISO 8601 UTC, `''` when there is none (`''`, `-`, Go's zero time).
 * RFC 3339 keeps its offset; the older `2006-01-02 15:04:05` form (no zone) is read in the
 * migrating process's time zone, where the old release wrote it. Returns undefined when the text
 * is no timestamp.
 */
export const toIsoTime = (text: string): string | undefined => {
  const t = text.trim();
  if (t === '' || t === '-' || t.startsWith('0001-01-01')) return '';
  const local = LOCAL.exec(t);
  const ms = local
    ? new Date(
        Number(local[1]),
        Number(local[2]) - 1,
        Number(local[3]),
        Number(local[4]),
        Number(local[5]),
        Number(local[6]),
        Math.round(Number(local[7] ?? 0) * 1000),
      ).getTime()
    : Date.parse(t);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
};
