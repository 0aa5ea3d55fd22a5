import type { ApiLogChunk, ApiNode } from '@trellis/contract';
import { seg } from '../../api/client';
import { useApp } from '../../app-context';
import { LogViewer } from '../../components/log-viewer';
import type { Stream } from './steps-table';

export type LogChoice = { kind: 'run' } | { kind: 'step'; step: string; stream: Stream };

/** "Run log", and the step shown with its stream picker. */
const LogTabs = ({
  logChoice,
  setLogChoice,
}: {
  logChoice: LogChoice;
  setLogChoice: (choice: LogChoice) => void;
}) => (
  <div className="tabs" role="tablist">
    <button
      type="button"
      role="tab"
      aria-selected={logChoice.kind === 'run'}
      className={logChoice.kind === 'run' ? 'active' : undefined}
      onClick={() => setLogChoice({ kind: 'run' })}
    >
      Run log
    </button>
    {logChoice.kind === 'step' && (
      <>
        <button type="button" role="tab" aria-selected className="active">
          {logChoice.step}
        </button>
        <select
          aria-label="Stream"
          value={logChoice.stream}
          onChange={(e) => setLogChoice({ ...logChoice, stream: e.target.value as Stream })}
        >
          <option value="stdout">stdout</option>
          <option value="stderr">stderr</option>
        </select>
      </>
    )}
  </div>
);

/**
 * The run's own log or one step's stdout / stderr, followed while it can still grow: the run's
 * while the run is active, a step's while it runs (or waits to, in an active run).
 */
export const LogPanel = ({
  base,
  logChoice,
  setLogChoice,
  live,
  nodes,
}: {
  /** The run's API path. */
  base: string;
  logChoice: LogChoice;
  setLogChoice: (choice: LogChoice) => void;
  live: boolean;
  nodes: readonly ApiNode[];
}) => {
  const { api } = useApp();
  const readLog = (choice: LogChoice) => (offset: number, limit: number) =>
    api.get<ApiLogChunk>(
      choice.kind === 'run' ? `${base}/log` : `${base}/steps/${seg(choice.step)}/log`,
      choice.kind === 'run' ? { offset, limit } : { offset, limit, stream: choice.stream },
    );
  const logKey =
    logChoice.kind === 'run' ? `${base}#run` : `${base}#${logChoice.step}#${logChoice.stream}`;
  const logLabel = logChoice.kind === 'run' ? 'Run log' : `${logChoice.step} — ${logChoice.stream}`;
  const stepLive = (step: string) => {
    const n = nodes.find((x) => x.step.name === step);
    return n ? n.status === 1 || (live && n.status === 0) : live;
  };
  return (
    <div className="panel">
      <LogTabs logChoice={logChoice} setLogChoice={setLogChoice} />
      <LogViewer
        key={logKey}
        sourceKey={logKey}
        read={readLog(logChoice)}
        live={logChoice.kind === 'run' ? live : stepLive(logChoice.step)}
        label={logLabel}
      />
    </div>
  );
};
