import { useMemo } from 'react';
import type { ApiStep } from '@trellis/contract';
import { toGraphInput } from '../lib/graph-input';
import { type PlacedVertex, layoutGraph } from '../lib/graph-layout';
import { NODE_STATUS_LABEL, nodeTone } from '../lib/status';

const ArrowMarker = () => (
  <defs>
    <marker
      id="arrow"
      viewBox="0 0 10 10"
      refX="9"
      refY="5"
      markerWidth="7"
      markerHeight="7"
      orient="auto"
    >
      <path d="M0,0 L10,5 L0,10 z" className="graph-arrow" />
    </marker>
  </defs>
);

/** One step: a box with a status dot, coloured by `status` (undefined outside a run). */
const StepVertex = ({
  v,
  status,
  selected,
  onSelect,
}: {
  v: PlacedVertex;
  status: number | undefined;
  selected: boolean;
  onSelect: ((step: string) => void) | undefined;
}) => {
  const tone = status === undefined ? 'def' : nodeTone(status);
  const label = status === undefined ? '' : (NODE_STATUS_LABEL[status] ?? '');
  return (
    <g
      className={`graph-node status-${tone}${selected ? ' selected' : ''}`}
      transform={`translate(${v.x - v.width / 2},${v.y - v.height / 2})`}
      tabIndex={onSelect ? 0 : -1}
      role={onSelect ? 'button' : undefined}
      aria-label={`${v.label}${label ? `: ${label}` : ''}`}
      data-step={v.id}
      data-status={label}
      onClick={() => onSelect?.(v.id)}
      onKeyDown={(e) => {
        if (e.key === 'Enter' || e.key === ' ') onSelect?.(v.id);
      }}
    >
      <title>{`${v.label}${label ? ` (${label})` : ''}`}</title>
      <rect width={v.width} height={v.height} rx={8} />
      <circle cx={16} cy={v.height / 2} r={5} className="graph-dot" />
      <text x={28} y={v.height / 2 + 4}>
        {v.label.length > 30 ? `${v.label.slice(0, 29)}…` : v.label}
        {v.child ? ' ↗' : ''}
      </text>
    </g>
  );
};

/** The step graph (dagre layout, SVG); vertices coloured by node status during a run. */
export const DagGraph = ({
  steps,
  statuses,
  selected,
  onSelect,
}: {
  steps: readonly ApiStep[];
  statuses?: ReadonlyMap<string, number>;
  selected?: string;
  onSelect?: (step: string) => void;
}) => {
  // The layout depends on the shape only; statuses just recolour it.
  const shapeKey = steps.map((s) => `${s.name}<${s.depends.join(',')}`).join('|');
  const layout = useMemo(() => layoutGraph(toGraphInput(steps)), [shapeKey]);
  const input = useMemo(() => toGraphInput(steps, statuses), [steps, statuses]);
  if (steps.length === 0) return <p className="muted">This DAG has no steps.</p>;
  return (
    <div className="graph-wrap">
      <svg
        className="graph"
        width={layout.width}
        height={layout.height}
        viewBox={`0 0 ${layout.width} ${layout.height}`}
        role="group"
        aria-label={`Step graph of ${steps.length} steps`}
      >
        <ArrowMarker />
        {layout.edges.map((e) => (
          <polyline
            key={`${e.from}->${e.to}`}
            className="graph-edge"
            points={e.points.map((p) => `${p.x},${p.y}`).join(' ')}
            markerEnd="url(#arrow)"
          />
        ))}
        {layout.vertices.map((v) => (
          <StepVertex
            key={v.id}
            v={v}
            status={input.vertices.find((x) => x.id === v.id)?.status}
            selected={selected === v.id}
            onSelect={onSelect}
          />
        ))}
      </svg>
      {input.dangling.length > 0 && (
        <p className="muted small">Unknown dependencies not drawn: {input.dangling.join(', ')}</p>
      )}
    </div>
  );
};
