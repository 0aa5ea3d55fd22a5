import type { ApiNode, ApiRunDetails, DagDetailsResponse } from '@trellis/contract';
import { DagGraph } from '../../components/dag-graph';
import { Gantt } from '../../components/gantt';
import { statusesOf } from '../../lib/graph-input';

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
}: {
  r: ApiRunDetails;
  /** The DAG's current definition (top-level runs only). */
  dag: DagDetailsResponse | undefined;
  /** The run's nodes with its handlers. */
  nodes: readonly ApiNode[];
  now: number;
  selected: string | undefined;
  onSelect: (step: string) => void;
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
      </div>
      <div className="panel">
        <h2>Timeline</h2>
        <Gantt nodes={nodes} runStart={r.startedAt} runEnd={r.finishedAt} now={now} />
      </div>
    </div>
  );
};
