import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** One generated legacy run. */
export interface LegacyRunSpec {
  readonly dag: string;
  readonly requestId: string;
  /** 0 none, 1 running, 2 error, 3 cancel, 4 success. */
  readonly status: number;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly withLogs: boolean;
}

const dateParts = (iso: string): string => {
  const d = new Date(iso);
  const p = (n: number, w = 2): string => String(n).padStart(w, '0');
  return `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}.${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}.${p(d.getUTCMilliseconds(), 3)}Z`;
};

/**
 * Writes runs in the peer's 1.16.x layout (as the peer does): `<dataDir>/<dag>-<hash>/
 * <dag>.<YYYYMMDD.HH:MM:SS.mmm>Z.<id8>.dat`, JSON lines with capitalised keys (first line the
 * starting state, last line the current one), step logs under `logDir`.
 */
export const writeLegacyRun = (dataDir: string, logDir: string, r: LegacyRunSpec): string => {
  const dir = join(dataDir, `${r.dag}-3f2a9c`);
  mkdirSync(dir, { recursive: true });
  const runLogDir = join(logDir, r.dag);
  mkdirSync(runLogDir, { recursive: true });
  const runLog = join(runLogDir, `agent_${r.requestId}.log`);
  const stepLog = (s: string): string => join(runLogDir, `${s}.${r.requestId.slice(0, 8)}.log`);
  if (r.withLogs) {
    writeFileSync(runLog, `run ${r.requestId} started\n`);
    writeFileSync(stepLog('extract'), 'extracted 10 rows\n');
    writeFileSync(stepLog('load'), 'loaded\n');
  }
  const failed = r.status === 2;
  const node = (name: string, cmd: string, status: number, error = '') => ({
    Step: {
      Name: name,
      Command: cmd.split(' ')[0],
      Args: cmd.split(' ').slice(1),
      CmdWithArgs: cmd,
    },
    Log: stepLog(name),
    StartedAt: r.startedAt,
    FinishedAt: r.finishedAt,
    Status: status,
    RetriedAt: '',
    RetryCount: name === 'load' && failed ? 2 : 0,
    DoneCount: 1,
    Error: error,
    StatusText: '',
  });
  const final = {
    RequestId: r.requestId,
    Name: r.dag,
    Status: r.status,
    StatusText: ['not started', 'running', 'failed', 'canceled', 'finished'][r.status] ?? '',
    Pid: 4242,
    Nodes: [
      node('extract', 'sh extract.sh --day 1', r.status === 0 ? 0 : 4),
      node(
        'load',
        'sh load.sh',
        failed ? 2 : r.status === 0 ? 0 : 4,
        failed ? 'exit status 1' : '',
      ),
    ],
    OnExit: r.status === 0 ? null : node('onExit', 'echo done', 4),
    OnSuccess: null,
    OnFailure: failed ? node('onFailure', 'notify.sh', 4) : null,
    OnCancel: null,
    StartedAt: r.startedAt,
    FinishedAt: r.finishedAt,
    Log: runLog,
    Params: 'DAY=1 extra',
    ParamsList: ['DAY=1', 'extra'],
  };
  const first = { ...final, Status: 1, FinishedAt: '', Nodes: [] };
  const path = join(dir, `${r.dag}.${dateParts(r.startedAt)}.${r.requestId.slice(0, 8)}.dat`);
  writeFileSync(path, `${JSON.stringify(first)}\n${JSON.stringify(final)}\n`);
  return path;
};
