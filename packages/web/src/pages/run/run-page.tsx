import { useState } from 'react';
import type { ApiNode, ApiRunDetails } from '@trellis/contract';
import { seg } from '../../api/client';
import { ErrorBox } from '../../components/error-box';
import { isActiveRun } from '../../lib/status';
import { useNow } from '../../lib/use-poll';
import { type LogChoice, LogPanel } from './log-panel';
import { OutputsPanel } from './outputs-panel';
import { RunDialogs } from './run-dialogs';
import { RunFacts } from './run-facts';
import { RunGraphPanels } from './run-graph';
import { type RunConfirm, RunCrumbs, RunHeader } from './run-header';
import { StepsPanel } from './steps-table';
import { useRunActions, useRunData } from './use-run';

/** The run's nodes, then its handlers (on success, failure, cancel, exit) that it has. */
const nodesWithHandlers = (r: ApiRunDetails): ApiNode[] => [
  ...r.nodes,
  ...[r.onSuccess, r.onFailure, r.onCancel, r.onExit].filter((n): n is ApiNode => n !== null),
];

/**
 * One run (a top-level run, or a child run under `root`): nodes, graph, timeline, logs with
 * follow, and stop / retry / dequeue / step status.
 */
export const RunPage = ({
  name,
  dagRunId,
  childId,
}: {
  name: string;
  dagRunId: string;
  childId?: string;
}) => {
  const now = useNow(1000);
  const [logChoice, setLogChoice] = useState<LogChoice>({ kind: 'run' });
  const [confirm, setConfirm] = useState<RunConfirm>();
  const { base, run, dag } = useRunData(name, dagRunId, childId);
  const actions = useRunActions(base, name, run.reload);

  if (run.error && !run.data) return <ErrorBox error={run.error} what="reading the run" />;
  const r = run.data;
  if (!r) return <p className="muted">Loading…</p>;
  const live = isActiveRun(r.status);
  const allNodes = nodesWithHandlers(r);
  const childLink = (childRunId: string) =>
    `/runs/${seg(r.rootDAGRunName || name)}/${seg(r.rootDAGRunId || dagRunId)}/children/${seg(childRunId)}`;
  const showStepLog = (step: string, stream: 'stdout' | 'stderr' = 'stdout') =>
    setLogChoice({ kind: 'step', step, stream });

  return (
    <section className="page">
      <RunCrumbs r={r} name={name} childId={childId} childLink={childLink} />
      <RunHeader r={r} live={live} childId={childId} onConfirm={setConfirm} />
      <RunFacts r={r} now={now} childLink={childLink} />
      {r.error && <div className="error-box">{r.error}</div>}
      {actions.actionError && <ErrorBox error={actions.actionError} />}
      <RunGraphPanels
        r={r}
        dag={dag.data}
        nodes={allNodes}
        now={now}
        selected={logChoice.kind === 'step' ? logChoice.step : undefined}
        onSelect={(step) => showStepLog(step)}
        childLink={childLink}
      />
      <StepsPanel
        nodes={allNodes}
        now={now}
        live={live}
        childLink={childLink}
        actions={{ onLog: showStepLog, onSetStatus: actions.setStepStatus }}
      />
      <OutputsPanel base={base} status={r.status} childLink={childLink} />
      <LogPanel
        base={base}
        logChoice={logChoice}
        setLogChoice={setLogChoice}
        live={live}
        nodes={allNodes}
      />
      <RunDialogs confirm={confirm} onClose={() => setConfirm(undefined)} actions={actions} />
    </section>
  );
};
