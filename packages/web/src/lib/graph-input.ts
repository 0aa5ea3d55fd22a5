import type { ApiStep } from '@trellis/contract';

/*
 * The step graph's input, from the DAG's steps and (during a run) its nodes: one vertex per step,
 * one edge per `depends` entry (chain DAGs already carry their implicit edges, spec model). Kept
 * apart from the layout so the rules are tested without a layout engine.
 */

export interface GraphVertex {
  readonly id: string;
  readonly label: string;
  /** Step status during a run (node status), or undefined when showing the definition. */
  readonly status: number | undefined;
  /** The step calls a child DAG. */
  readonly child: boolean;
}

export interface GraphEdge {
  readonly from: string;
  readonly to: string;
}

export interface GraphInput {
  readonly vertices: readonly GraphVertex[];
  readonly edges: readonly GraphEdge[];
  /** `depends` entries that name no step (shown as a note, not drawn). */
  readonly dangling: readonly string[];
}

/**
 * Vertices in step order; an edge for each known dependency, once (a repeated entry in `depends`
 * is one edge); a self-dependency or an unknown name is left out and reported in `dangling`.
 */
export const toGraphInput = (
  steps: readonly Pick<ApiStep, 'name' | 'depends' | 'run'>[],
  statusByStep?: ReadonlyMap<string, number>,
): GraphInput => {
  const names = new Set(steps.map((s) => s.name));
  const seen = new Set<string>();
  const vertices: GraphVertex[] = [];
  const edges: GraphEdge[] = [];
  const dangling: string[] = [];
  const edgeKeys = new Set<string>();
  for (const s of steps) {
    if (seen.has(s.name)) continue;
    seen.add(s.name);
    vertices.push({
      id: s.name,
      label: s.name,
      status: statusByStep?.get(s.name),
      child: Boolean(s.run),
    });
    for (const d of s.depends) {
      if (!names.has(d) || d === s.name) {
        dangling.push(`${s.name} -> ${d}`);
        continue;
      }
      const key = `${d}\u0000${s.name}`;
      if (edgeKeys.has(key)) continue;
      edgeKeys.add(key);
      edges.push({ from: d, to: s.name });
    }
  }
  return { vertices, edges, dangling };
};

/** Node statuses by step name, from a run's nodes. */
export const statusesOf = (
  nodes: readonly { step: { name: string }; status: number }[],
): Map<string, number> => new Map(nodes.map((n) => [n.step.name, n.status]));
