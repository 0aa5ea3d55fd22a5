import type { ApiNode, ApiRunDetails, DagDetailsResponse } from '@trellis/contract';
import { DagGraph } from '../../components/dag-graph';
import { Gantt } from '../../components/gantt';
import { StatusBadge } from '../../components/status-badge';
import { statusesOf } from '../../lib/graph-input';
import { Link } from '../../router';

/** Links to the child runs (sub-DAG runs) the run's steps started, under the graph. */
const ChildRuns = ({
  nodes,
  childLink,
}: {
  nodes: readonly ApiNode[];
  childLink: (childRunId: string) => string;
}) => {
  const rows = nodes.flatMap((n) =>
    [...n.children, ...n.childrenRepeated].map((c) => ({ step: n.step, c })),
  );
  if (rows.length === 0) return null;
  return (
    <ul className="child-runs small" aria-label="Child runs">
      {rows.map(({ step, c }) => (
        <li key={c.dagRunId} data-child-run={c.dagRunId}>
          {step.name} ↳{' '}
          <Link to={childLink(c.dagRunId)}>
            {c.name || step.run || 'child run'} <span className="mono">{c.dagRunId}</span>
          </Link>{' '}
          {c.statusLabel && <StatusBadge status={c.status} label={c.statusLabel} />}
        </li>
      ))}
    </ul>
  );
};

/** The run's steps, with `depends` from the definition where the run's copy lacks them. */
const mergeSteps = (
  runSteps: ApiRunDetails['nodes'][number]['step'][],
  defSteps: DagDetailsResponse['dag']['steps'],
) => {
  const byName = new Map(defSteps.map((s) => [s.name, s]));
  return runSteps.map((s) =>
    s.depends.length > 0 ? s : { ...s, depends: byName.get(s.name)?.depends ?? [] },
  );
};

/** The step graph coloured by status (a click shows that step's log) beside the timeline. */
export const RunGraphPanels = ({
  r,
  dag,
  nodes,
  now,
  selected,
  onSelect,
  childLink,
}: {
  r: ApiRunDetails;
  /** The DAG's current definition (top-level runs only). */
  dag: DagDetailsResponse | undefined;
  /** The run's nodes with its handlers. */
  nodes: readonly ApiNode[];
  now: number;
  selected: string | undefined;
  onSelect: (step: string) => void;
  childLink: (childRunId: string) => string;
}) => {
  // The graph: the DAG's current steps when this is its own top-level run, else the run's own.
  const steps = r.nodes.map((n) => n.step);
  return (
    <div className="two-col">
      <div className="panel">
        <h2>Graph</h2>
        <DagGraph
          steps={dag && dag.dag.name === r.name ? mergeSteps(steps, dag.dag.steps) : steps}
          statuses={statusesOf(nodes)}
          {...(selected !== undefined ? { selected } : {})}
          onSelect={onSelect}
        />
        <ChildRuns nodes={nodes} childLink={childLink} />
      </div>
      <div className="panel">
        <h2>Timeline</h2>
        <Gantt nodes={nodes} runStart={r.startedAt} runEnd={r.finishedAt} now={now} />
      </div>
    </div>
  );
};
